import Foundation
import Hummingbird
import InstantJSON
import InstantTesting
import Testing

@testable import InstantServer

@Suite("Listening for changes", .timeLimit(.minutes(10)))
struct ListenTests {
    @Test func aLongPollAnswersAsSoonAsTheRevisionPassesSince() async throws {
        // A timeout longer than the test would take: only a wake-up can answer in time.
        let fixture = try await SyncFixture(longPollTimeout: .seconds(40))
        try await fixture.onDocument { client, port, id, token in
            let alice = SyncClient(client, documentID: id, token: token, clientID: "a")
            try await alice.sync([put("n1", noteContent())])

            let behind = try await longPoll(port: port, path: "/i/d/\(id)/listen?since=0", token: token)
            #expect(behind.status == 200)
            #expect(behind.body?["revision"]?.integerValue == 1, "a client behind is answered at once")

            let started = ContinuousClock.now
            let waiting = Task { try await longPoll(port: port, path: "/i/d/\(id)/listen?since=1", token: token) }
            try await Task.sleep(for: .milliseconds(300))
            try await alice.sync([put("n2", noteContent())])
            let woken = try await waiting.value
            #expect(woken.status == 200)
            #expect(woken.body?["revision"]?.integerValue == 2)
            #expect(ContinuousClock.now - started < .seconds(30), "woken by the change, not by the timeout")
        }
    }

    @Test func aLongPollWithoutChangesAnswersTheCurrentRevisionAfterTheTimeout() async throws {
        let fixture = try await SyncFixture(longPollTimeout: .milliseconds(500))
        try await fixture.onDocument { client, port, id, token in
            let reply = try await longPoll(port: port, path: "/i/d/\(id)/listen?since=0", token: token)
            #expect(reply.status == 200)
            #expect(reply.body?["revision"]?.integerValue == 0)
            let bad = try await longPoll(port: port, path: "/i/d/\(id)/listen?since=-3", token: token)
            #expect(bad.status == 400)
        }
    }

    @Test func aWebSocketGetsCoalescedRevisionsAndPresence() async throws {
        let fixture = try await SyncFixture()
        try await fixture.onDocument { client, port, id, token in
            let first = ListeningSocket(port: port, path: "/i/d/\(id)/listen?since=0&jwt=\(token)")
            #expect(try await first.message { $0["presence"] != nil } != nil)
            let bob = try await fixture.token(id, user: "bob")
            let second = ListeningSocket(port: port, path: "/i/d/\(id)/listen?since=0&jwt=\(bob)")
            let third = ListeningSocket(port: port, path: "/i/d/\(id)/listen?since=0&jwt=\(bob)")
            #expect(try await first.presence(becoming: ["alice:1", "bob:2"]) == ["alice:1", "bob:2"])
            await third.close()

            let alice = SyncClient(client, documentID: id, token: token, clientID: "phone")
            try await alice.sync([put("n1", noteContent())])
            #expect(try await first.message { $0["revision"]?.integerValue == 1 } != nil)
            #expect(try await second.message { $0["revision"]?.integerValue == 1 } != nil)
            let poke = try #require(try await second.message { $0["revision"] != nil })
            #expect(poke.objectValue?.keys.sorted() == ["revision"], "a poke carries the revision, never data")

            await second.close()
            #expect(try await first.presence(becoming: ["alice:1"]) == ["alice:1"])
            await first.close()
        }
    }

    @Test func revokedAndExpiredTokensAreCutOff() async throws {
        let fixture = try await SyncFixture()
        try await fixture.onDocument { client, port, id, _ in
            let revocable = try await fixture.token(id, tokenID: "jti-1")
            let socket = ListeningSocket(port: port, path: "/i/d/\(id)/listen?jwt=\(revocable)")
            #expect(try await socket.message { $0["presence"] != nil } != nil)
            let revoked = try await client.json(.post, "/api/revoke", ["jtis": ["jti-1"]])
            #expect(revoked.status == .ok)
            let close = try await socket.closedByServer()
            #expect(close?.closeCode == .policyViolation)
            #expect(close?.reason?.contains("revoked") == true)

            let shortLived = try await fixture.token(id, expiresIn: 1)
            let expiring = ListeningSocket(port: port, path: "/i/d/\(id)/listen?jwt=\(shortLived)")
            let expired = try await expiring.closedByServer()
            #expect(expired?.closeCode == .policyViolation)
            #expect(expired?.reason?.contains("expired") == true)

            let again = try await longPoll(port: port, path: "/i/d/\(id)/listen", token: revocable)
            #expect(again.status == 403)
            #expect(again.body?["error"]?["reason"]?.stringValue?.contains("revoked") == true)
        }
    }
}
