import Foundation
import Hummingbird
import InstantJSON
import InstantTesting
import JWTKit
import Testing

@testable import InstantServer

/// What a client with an ordinary token could do to the server or to other clients, one test per
/// way found (docs/SECURITY.md says what is refused and how).
@Suite("Hostile clients", .timeLimit(.minutes(10)))
struct HostileClientTests {
    /// Nobody but the client's own user can change a client's exactly-once state: not a read-only
    /// token, not another user's token, not a push id far above the last one.
    @Test func noTokenCanBlockAnotherClientsPushes() async throws {
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let alice = SyncClient(client, documentID: id, token: try await fixture.token(id), clientID: "c-alice")
            #expect(try await alice.sync([put("n1", noteContent(text: "one"))]).status == .ok)

            // A read-only token sends Alice's client id with the largest push id, as a pull and as a
            // push; another user with `write` does the same with a push.
            let reader = SyncClient(
                client, documentID: id,
                token: try await fixture.token(id, user: "mallory", permissions: ["read-document"]),
                clientID: "c-alice")
            #expect(try await reader.sync([], pushID: .max).status == .ok)
            let readerPush = try await reader.sync([put("n1", noteContent(text: "mallory"))], pushID: .max)
            #expect(readerPush.rejections["n1"] == "permissionDenied")
            let writer = SyncClient(
                client, documentID: id, token: try await fixture.token(id, user: "mallory"), clientID: "c-alice")
            let jump = try await writer.sync([put("m1", noteContent())], pushID: .max)
            #expect(jump.status == .badRequest)
            #expect(jump.reason?.contains("pushId") == true)
            let anonymous = SyncClient(
                client, documentID: id, token: try await fixture.token(id, user: nil), clientID: "c-alice")
            #expect(try await anonymous.sync([put("m2", noteContent())], pushID: .max).status == .badRequest)
            // Mallory's own pushes under the same client id are hers alone.
            #expect(try await writer.sync([put("m3", noteContent())], pushID: 2).rejections.isEmpty)

            // Alice's next push is applied.
            let next = try await alice.sync([put("n2", noteContent(text: "two"))])
            #expect(next.status == .ok)
            #expect(next.json?["pushId"]?.integerValue == 2)
            let stored = try await client.request(.get, "/api/documents/\(id)/annotations/n2")
            #expect(stored.status == .ok, "Alice's second push must be applied, not taken for a repeat")
            #expect(try await client.request(.get, "/api/documents/\(id)/annotations/m1").status == .notFound)
        }
    }

    /// Presence names users and counts their connections; it never shows the client ids that key
    /// exactly-once state.
    @Test func presenceShowsNoClientIdentifier() async throws {
        let fixture = try await SyncFixture()
        try await fixture.onDocument { client, port, id, token in
            let socket = ListeningSocket(port: port, path: "/i/d/\(id)/listen?clientId=c-secret&jwt=\(token)")
            let presence = try await socket.presence(becoming: ["alice:1"])
            #expect(presence == ["alice:1"])
            let seen = await socket.messages().map { $0.serializedString() }.joined()
            #expect(!seen.contains("c-secret"))
            #expect(!seen.contains("clientId"))
            await socket.close()
        }
    }

    /// Client routes have limits of their own, far below the backend API's: the sync body, the
    /// number of changes of a push, each record, and attachments.
    @Test func clientBodiesAndRecordsAreBounded() async throws {
        var configured = try await SyncFixture()
        configured.harness.clientLimits = ClientLimits(
            maxSyncBodySize: 64 * 1024, maxAttachmentSize: 32 * 1024, maxRecordSize: 4 * 1024, maxChangesPerPush: 10)
        let fixture = configured
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let token = try await fixture.token(id)
            let alice = SyncClient(client, documentID: id, token: token, clientID: "c-alice")

            let huge = try await alice.sync([put("n1", noteContent(text: String(repeating: "x", count: 100_000)))])
            #expect(huge.status == .contentTooLarge)
            #expect(huge.reason?.contains("--max-sync-body-size") == true)

            let many = try await alice.sync((0..<11).map { put("n\($0)", noteContent()) })
            #expect(many.status == .contentTooLarge)
            #expect(many.reason?.contains("--max-changes-per-push") == true)

            let large = try await alice.sync([put("big", noteContent(text: String(repeating: "y", count: 5_000)))])
            #expect(large.status == .ok)
            #expect(large.rejections["big"] == "recordTooLarge")
            #expect(try await client.request(.get, "/api/documents/\(id)/annotations/big").status == .notFound)

            let bytes = Data(repeating: 7, count: 40 * 1024)
            let upload = try await client.request(
                .put, "/i/d/\(id)/attachments/\(Attachment.key(for: bytes))",
                headers: [.authorization: "Token token=\"\(token)\"", .contentType: "image/png"], body: bytes,
                apiToken: nil)
            #expect(upload.status == .contentTooLarge)
            #expect(upload.reason?.contains("--max-client-attachment-size") == true)

            // The backend API keeps its own, larger limit.
            let backend = try await client.json(
                .post, "/api/documents/\(id)/annotations",
                ["content": noteContent(text: String(repeating: "z", count: 100_000))])
            #expect(backend.status == .ok, "\(backend.reason ?? "")")
        }
    }

    /// An `exp` far in the future (valid JSON, however large) never overflows a wait.
    @Test func aFarFutureExpiryNeverCrashesTheServer() async throws {
        let fixture = try await SyncFixture(longPollTimeout: .milliseconds(300))
        try await fixture.onDocument { client, port, id, _ in
            for seconds in [1e19, 1.8e20, 1e300] {
                let token = try await fixture.key.token(
                    ClientClaims(
                        documentID: id, permissions: ["read-document"],
                        expiration: Date(timeIntervalSince1970: seconds)))
                let poll = try await longPoll(port: port, path: "/i/d/\(id)/listen?since=5", token: token)
                #expect(poll.status == 200)
                let socket = ListeningSocket(port: port, path: "/i/d/\(id)/listen?jwt=\(token)")
                #expect(try await socket.message { $0["presence"] != nil } != nil)
                await socket.close()
            }
            #expect(try await client.request(.get, "/healthcheck").status == .ok)
        }
    }

    /// One token cannot open listeners without end, and a burst of arrivals costs each listener
    /// a few presence messages, not one per arrival.
    @Test func listenersAreCappedAndPresenceIsCoalesced() async throws {
        var configured = try await SyncFixture(longPollTimeout: .milliseconds(300))
        configured.harness.clientLimits.listening = ListeningLimits(
            maximumListenersPerToken: 12, maximumListenersPerLayer: 14, presenceInterval: .milliseconds(500))
        let fixture = configured
        try await fixture.onDocument { client, port, id, token in
            let watcher = ListeningSocket(port: port, path: "/i/d/\(id)/listen?jwt=\(token)")
            #expect(try await watcher.presence(becoming: ["alice:1"]) == ["alice:1"])
            let start = ContinuousClock.now
            let crowd = (0..<11).map { _ in ListeningSocket(port: port, path: "/i/d/\(id)/listen?jwt=\(token)") }
            #expect(try await watcher.presence(becoming: ["alice:12"]) == ["alice:12"])
            let elapsed = ContinuousClock.now - start
            let presenceMessages = await watcher.messages().filter { $0["presence"] != nil }.count
            // One on connection, then at most one per interval while the crowd arrived.
            let bound = 2 + Int((elapsed / .milliseconds(500)).rounded(.up))
            #expect(presenceMessages <= bound, "\(presenceMessages) presence messages for 11 arrivals in \(elapsed)")

            let refused = try await longPoll(port: port, path: "/i/d/\(id)/listen?since=5", token: token)
            #expect(refused.status == 429)
            #expect(refused.body?["error"]?["reason"]?.stringValue?.contains("--max-listeners-per-token") == true)
            let upgrade = try await rawUpgrade(port: port, path: "/i/d/\(id)/listen?jwt=\(token)")
            #expect(upgrade?.status == 429, "\(String(describing: upgrade))")
            #expect(upgrade?.reason?.contains("--max-listeners-per-token") == true)

            // Another user's token may still listen, up to the layer's limit.
            let bob = try await fixture.token(id, user: "bob")
            let others = (0..<2).map { _ in ListeningSocket(port: port, path: "/i/d/\(id)/listen?jwt=\(bob)") }
            #expect(try await watcher.presence(becoming: ["alice:12", "bob:2"]) == ["alice:12", "bob:2"])
            let full = try await longPoll(port: port, path: "/i/d/\(id)/listen?since=5", token: bob)
            #expect(full.status == 429)
            #expect(full.body?["error"]?["reason"]?.stringValue?.contains("--max-listeners-per-layer") == true)

            for socket in crowd + others { await socket.close() }
            #expect(try await watcher.presence(becoming: ["alice:1"]) == ["alice:1"])
            await watcher.close()
        }
    }

    /// A refused WebSocket upgrade is answered like the long-poll: the status and the reason.
    @Test func aRefusedUpgradeSaysWhy() async throws {
        let fixture = try await SyncFixture()
        try await fixture.onDocument { client, port, id, _ in
            let missing = try await rawUpgrade(port: port, path: "/i/d/\(id)/listen")
            #expect(missing?.status == 401, "\(String(describing: missing))")
            #expect(missing?.reason?.contains("JWT") == true)
            let other = try await fixture.token("another-document")
            let wrong = try await rawUpgrade(port: port, path: "/i/d/\(id)/l/notes/listen?jwt=\(other)")
            #expect(wrong?.status == 403, "\(String(describing: wrong))")
            #expect(wrong?.reason?.contains("another-document") == true)
            let token = try await fixture.token(id)
            let accepted = try await rawUpgrade(port: port, path: "/i/d/\(id)/listen?jwt=\(token)")
            #expect(accepted?.status == 101)
        }
    }

    /// Claims of the wrong type are refused with a reason that names the claim, never with the
    /// JWT library's internals.
    @Test func claimsOfTheWrongTypeAreNamed() async throws {
        struct OddClaims: JWTPayload {
            var document_id: String
            var permissions: String
            var exp: ExpirationClaim
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let keys = JWTKeyCollection()
            await keys.add(ecdsa: try ES256PrivateKey(pem: fixture.key.privateKeyPEM))
            let odd = try await keys.sign(
                OddClaims(
                    document_id: id, permissions: "read-document",
                    exp: ExpirationClaim(value: Date().addingTimeInterval(600))))
            let reply = try await client.request(
                .get, "/i/d/\(id)/snapshot", headers: [.authorization: "Token token=\"\(odd)\""], apiToken: nil)
            #expect(reply.status == .forbidden)
            #expect(reply.reason == "The token's 'permissions' claim must be an array of strings.")
        }
    }

    /// Records must be of a type the format knows, and text must be UTF-8.
    @Test func unknownAnnotationTypesAndInvalidUTF8AreRefused() async throws {
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let token = try await fixture.token(id)
            let alice = SyncClient(client, documentID: id, token: token, clientID: "c-alice")
            var evil = try #require(noteContent().objectValue)
            evil["type"] = "pspdfkit/evil"
            let pushed = try await alice.sync([put("e1", .object(evil))])
            #expect(pushed.rejections["e1"] == "invalidRecord")

            var body = Data(#"{"clientId": "c-alice", "baseRevision": 0, "pushId": 9, "changes": [{"op": "put", "#.utf8)
            body.append(Data(#""kind": "annotation", "id": "u1", "content": {"v": 2, "type": "pspdfkit/note", "#.utf8))
            body.append(Data(#""pageIndex": 0, "bbox": [1, 2, 3, 4], "icon": "comment", "text": {"format": "#.utf8))
            body.append(Data(#""plain", "value": "bad "#.utf8) + Data([0xC3, 0x28, 0xFF]) + Data(#""}}}]}"#.utf8))
            let invalid = try await client.request(
                .post, "/i/d/\(id)/sync",
                headers: [.authorization: "Token token=\"\(token)\"", .contentType: "application/json"], body: body,
                apiToken: nil)
            #expect(invalid.status == .badRequest)
            #expect(invalid.reason?.contains("UTF-8") == true)
            #expect(try await client.request(.get, "/api/documents/\(id)/annotations/u1").status == .notFound)
        }
    }

    /// Multipart boundaries follow RFC 2046: an empty one is refused instead of storing the whole
    /// body as the PDF, and a long one is refused before any search.
    @Test func multipartBoundariesAreChecked() async throws {
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            let pdf = TestPDF.make(pageCount: 1)
            let form = ServerHarness.Client.multipart(
                boundary: "", parts: [(name: "file", filename: "a.pdf", type: "application/pdf", data: pdf)])
            let empty = try await client.request(
                .post, "/api/documents", headers: [.contentType: "multipart/form-data; boundary="], body: form)
            #expect(empty.status == .badRequest)
            #expect(empty.reason?.contains("boundary") == true)
            #expect(try await client.request(.get, "/api/documents").json?["document_count"] == 0)

            let long = String(repeating: "b", count: 8_001)
            let body = Data(repeating: UInt8(ascii: "b"), count: 1 << 20)
            let refused = try await client.request(
                .post, "/api/documents", headers: [.contentType: "multipart/form-data; boundary=\(long)"], body: body)
            #expect(refused.status == .badRequest)
            #expect(refused.reason?.contains("RFC 2046") == true)
        }
    }
}
