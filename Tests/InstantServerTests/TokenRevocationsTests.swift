import Foundation
import Testing

@testable import InstantServer

@Suite("What a node knows of token revocations")
struct TokenRevocationsTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aReadThatStartedBeforeARevocationDoesNotHideIt() {
        let revocations = TokenRevocations()
        revocations.noteRevoked(["a"])
        // A read that started before the revocation was noted found the id not revoked.
        revocations.noteRead("a", revoked: false, startedAt: start)
        #expect(revocations.isRevoked("a", at: start) == true)
    }

    @Test func aReadCountsForASecondFromWhenItStarted() {
        let revocations = TokenRevocations()
        #expect(revocations.isRevoked("a", at: start) == nil)
        revocations.noteRead("a", revoked: false, startedAt: start)
        #expect(revocations.isRevoked("a", at: start.addingTimeInterval(0.99)) == false)
        #expect(revocations.isRevoked("a", at: start.addingTimeInterval(1)) == nil)
        revocations.noteRead("b", revoked: true, startedAt: start)
        #expect(revocations.isRevoked("b", at: start.addingTimeInterval(3600)) == true)
    }

    @Test func itKeepsABoundedNumberOfIDs() {
        let revocations = TokenRevocations()
        let count = TokenRevocations.maximumIDs
        for index in 0..<count { revocations.noteRead("clear-\(index)", revoked: false, startedAt: start) }
        revocations.noteRevoked((0..<count).map { "revoked-\($0)" })
        #expect(revocations.isRevoked("clear-0", at: start) == false)
        #expect(revocations.isRevoked("revoked-0", at: start) == true)
        // One more of each: that kind is forgotten (read again), the newest kept.
        revocations.noteRead("clear-new", revoked: false, startedAt: start)
        revocations.noteRevoked(["revoked-new"])
        #expect(revocations.isRevoked("clear-0", at: start) == nil)
        #expect(revocations.isRevoked("clear-new", at: start) == false)
        #expect(revocations.isRevoked("revoked-0", at: start) == nil)
        #expect(revocations.isRevoked("revoked-new", at: start) == true)
    }
}
