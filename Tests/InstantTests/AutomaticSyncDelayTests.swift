import Foundation
import Testing

@testable import Instant

@Suite("delayForSyncingLocalChanges values", .timeLimit(.minutes(10)))
struct AutomaticSyncDelayTests {
    @Test("The default is one second")
    func defaultIsOneSecond() {
        #expect(AutomaticSyncDelay.default == .after(.seconds(1)))
        #expect(TimeInterval.instantDefaultDelayForSyncingLocalChanges == 1)
        #expect(AutomaticSyncDelay.default.timeInterval == 1)
    }

    @Test("Positive delays are kept", arguments: [0.25, 1, 2.5, 3600])
    func positiveDelays(seconds: Double) throws {
        let delay = try AutomaticSyncDelay(timeInterval: seconds)
        #expect(delay.timeInterval == seconds)
    }

    @Test("Zero, negative and NaN delays are refused", arguments: [0, -1, -0.5, Double.nan, -Double.infinity])
    func invalidDelaysAreRefused(seconds: Double) {
        #expect(throws: InstantError.self) { try AutomaticSyncDelay(timeInterval: seconds) }
        do {
            _ = try AutomaticSyncDelay(timeInterval: seconds)
        } catch {
            #expect(error.code == .invalidSyncDelay)
            #expect(error.message.contains("instantSyncingLocalChangesDisabled"))
        }
    }

    @Test("The sentinel disables automatic sync and reads back as itself")
    func sentinel() throws {
        let delay = try AutomaticSyncDelay(timeInterval: .instantSyncingLocalChangesDisabled)
        #expect(delay == .disabled)
        #expect(delay.timeInterval == .instantSyncingLocalChangesDisabled)
    }

    @Test("Absurdly long delays are accepted without overflow")
    func hugeDelays() throws {
        let delay = try AutomaticSyncDelay(timeInterval: 1e300)
        guard case .after(let duration) = delay else {
            Issue.record("a finite delay should not disable syncing")
            return
        }
        #expect(duration >= .seconds(1_000_000_000))
    }
}
