import Foundation
import InstantTesting
import Logging
import ServiceLifecycle
import Synchronization
import Testing

@testable import InstantServer

/// Sync requests that no connection waits for (answered ahead of the router, or sent on a listening
/// WebSocket) are waited for when the server stops, so that the storage does not stop under their
/// commit.
@Suite("Sync requests under way at shutdown", .timeLimit(.minutes(2)))
struct SyncRequestsUnderWayTests {
    @Test func aWaitEndsWithTheLastRequest() async throws {
        let underWay = SyncRequestsUnderWay()
        await underWay.untilNone(waitingAtMost: .seconds(600))  // none runs: at once
        underWay.started()
        underWay.started()
        let lastEnded = Mutex(false)
        let waiting = Task {
            await underWay.untilNone(waitingAtMost: .seconds(600))
            return lastEnded.withLock { $0 }
        }
        #expect(try await eventually { underWay.isAwaited })
        underWay.ended()
        #expect(underWay.isAwaited, "one request still runs")
        lastEnded.withLock { $0 = true }
        underWay.ended()
        #expect(await waiting.value, "the wait ended after the last request, not before")
        #expect(!underWay.isAwaited)
    }

    @Test func aWaitIsBounded() async {
        let underWay = SyncRequestsUnderWay()
        underWay.started()
        await underWay.untilNone(waitingAtMost: .milliseconds(20))
        #expect(underWay.running == 1, "the time ran out with the request still running")
        #expect(!underWay.isAwaited)
        underWay.ended()
        #expect(underWay.running == 0)
    }

    @Test func theServersShutdownWaitsForThem() async throws {
        let underWay = SyncRequestsUnderWay()
        // Limits beyond the suite's: the shutdown can end only because the request ended.
        let shutdown = ClientWorkShutdown(
            events: LayerEvents(), syncRequests: underWay, listenersLimit: .seconds(600),
            syncRequestsLimit: .seconds(600))
        let group = ServiceGroup(
            configuration: .init(services: [shutdown], logger: Logger(label: "test.shutdown")))
        let running = Task { try await group.run() }
        underWay.started()
        await group.triggerGracefulShutdown()
        #expect(try await eventually { underWay.isAwaited }, "the shutdown waits for the request")
        underWay.ended()
        try await running.value
    }
}
