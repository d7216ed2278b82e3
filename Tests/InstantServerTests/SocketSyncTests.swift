import Foundation
import InstantJSON
import InstantTesting
import NIOCore
import NIOWebSocket
import Testing

@testable import InstantServer

/// Sync requests sent on the listening WebSocket: the same answers and exactly-once rules as
/// `POST …/sync`, in order with the change messages, and errors that name the request.
@Suite("Listening for changes: sync requests on the WebSocket", .timeLimit(.minutes(10)))
struct SocketSyncTests {
    /// Sends `{"requestId": id, "sync": body}` and waits for the reply carrying `id`.
    static func request(_ socket: ListeningSocket, id: JSONValue, _ body: JSONValue) async throws -> JSONValue {
        socket.send(JSONValue.object(["requestId": id, "sync": body]).serializedString())
        return try #require(try await socket.message { $0["requestId"] == id }, "no reply to request \(id)")
    }

    /// The body of a sync request.
    static func syncBody(client: String, base: Int64, pushID: Int64? = nil, _ changes: [JSONValue] = []) -> JSONValue {
        var body: JSONObject = [
            "clientId": .string(client), "baseRevision": .integer(base), "changes": .array(changes),
        ]
        if let pushID { body["pushId"] = .integer(pushID) }
        return .object(body)
    }

    @Test func aPushOnTheSocketIsAnsweredThereAndAppliedOnceHoweverItIsRetried() async throws {
        let fixture = try await SyncFixture()
        try await fixture.onDocument { client, port, id, token in
            let socket = ListenRecordsTests.socket(port, id, token: token)
            try await ListenRecordsTests.opened(socket)
            let push = Self.syncBody(client: "a", base: 0, pushID: 1, [put("n1", noteContent(text: "on the socket"))])

            let reply = try await Self.request(socket, id: "first", push)
            let answer = try #require(reply["answer"])
            #expect(answer["revision"]?.integerValue == 1)
            #expect(answer["pushId"]?.integerValue == 1)
            #expect(answer["rejected"] == [])
            #expect(answer["records"]?.arrayValue?.map { $0["id"] } == ["n1"])

            // What an HTTP client at revision 0 pulls is what the socket's answer carried.
            let pulled = try await SyncClient(client, documentID: id, token: token, clientID: "b").sync()
            #expect(pulled.json?["records"] == answer["records"])

            // The same push again, on the socket and over HTTP, is answered without a new commit.
            let again = try await Self.request(socket, id: 2, push)
            #expect(again["answer"]?["revision"]?.integerValue == 1)
            #expect(again["answer"]?["pushId"]?.integerValue == 1)
            let overHTTP = try await SyncClient(client, documentID: id, token: token, clientID: "a")
                .sync([put("n1", noteContent(text: "on the socket"))], pushID: 1)
            #expect(overHTTP.json?["revision"]?.integerValue == 1)
            #expect(overHTTP.json?["pushId"]?.integerValue == 1)
            await socket.close()
        }
    }

    /// An answer goes out as frames of its parts: the JSON it shares with the other answers of its
    /// group in slices of where it was written (frames of at most 16 KiB, never copied into one
    /// buffer), the text written for it around them; one text message in all.
    @Test func anAnswerGoesOutInFramesOfItsParts() async throws {
        let shared = ByteBuffer(string: String(repeating: "s", count: 40_000))
        let channel = try await ListeningWebSocketHandler.answeringARequest { _, _, _, _ in
            var body = SyncAnswerBody(ByteBuffer(string: #"{"requestId":1,"answer":{"records":["#))
            body.append(shared: shared)
            body.text.writeString(",")
            body.append(shared: ByteBuffer(string: "t"))
            body.text.writeString("]}}")
            return (body, 0)
        }
        var frames: [WebSocketFrame] = []
        repeat {
            let frame = try await channel.waitForOutboundWrite(as: WebSocketFrame.self)
            // The listener's presence may go out first, in a message of its own.
            if frames.isEmpty, !String(buffer: frame.unmaskedData).hasPrefix(#"{"requestId""#) { continue }
            frames.append(frame)
        } while frames.last?.fin != true
        #expect(frames.map(\.opcode) == [.text] + Array(repeating: .continuation, count: frames.count - 1))
        #expect(frames.dropLast().allSatisfy { !$0.fin })
        #expect(frames.allSatisfy { $0.unmaskedData.readableBytes <= ListeningWebSocketHandler.frameSize })
        // The text before the shared part, the shared part in three, the comma, "t", the end.
        try #require(frames.count == 7, "\(frames.map(\.unmaskedData.readableBytes))")
        let text = frames.map { String(buffer: $0.unmaskedData) }.joined()
        #expect(text == #"{"requestId":1,"answer":{"records":["# + String(repeating: "s", count: 40_000) + ",t]}}")
        // The shared JSON's frames are slices of its buffer: 16 KiB, 16 KiB and the rest.
        let sharedStart = shared.withVeryUnsafeBytes { $0.baseAddress }
        #expect(frames[1].unmaskedData.withVeryUnsafeBytes { $0.baseAddress } == sharedStart)
        #expect(frames[1...3].map(\.unmaskedData.readableBytes) == [16_384, 16_384, 40_000 - 2 * 16_384])
        try await channel.close()
    }

    /// The answer is written between the envelope's two parts, which carry the request id as the
    /// client sent it (escaped as JSON).
    @Test func theAnswersEnvelopeNamesTheRequest() throws {
        let cases: [(id: JSONValue, opening: String)] = [
            (7, #"{"requestId":7,"answer":"#),
            (.string(#"push "1"\n"#), #"{"requestId":"push \"1\"\\n","answer":"#),
        ]
        for (id, opening) in cases {
            let message = JSONValue.object(["requestId": id, "sync": Self.syncBody(client: "a", base: 0)])
            let request = try SocketSyncRequest(ByteBuffer(bytes: message.serialized()), maxChanges: 10)
            let envelope = request.answerEnvelope
            #expect(String(buffer: envelope.opening) == opening)
            #expect(envelope.closing.description == "}")
        }
    }

    @Test func changeMessagesAfterAnAnswerContinueFromItsRevision() async throws {
        let fixture = try await SyncFixture()
        try await fixture.onDocument { client, port, id, token in
            let pusher = ListenRecordsTests.socket(port, id, token: token)
            let other = ListenRecordsTests.socket(port, id, token: token)
            try await ListenRecordsTests.opened(pusher)
            try await ListenRecordsTests.opened(other)

            let reply = try await Self.request(
                pusher, id: "p", Self.syncBody(client: "a", base: 0, pushID: 1, [put("n1", noteContent())]))
            #expect(reply["answer"]?["revision"]?.integerValue == 1)
            // Another listener gets the socket push's commit as a change message.
            let forOther = try #require(try await other.message { $0["records"] != nil })
            #expect(forOther["since"]?.integerValue == 0)
            #expect(forOther["revision"]?.integerValue == 1)

            // A commit made over HTTP afterwards reaches the pusher from the answer's revision on.
            let bob = SyncClient(client, documentID: id, token: token, clientID: "b")
            bob.baseRevision = 1
            try await bob.sync([put("n2", noteContent(text: "from HTTP"))])
            let next = try #require(try await pusher.message { $0["records"] != nil && $0["since"]?.integerValue == 1 })
            #expect(next["revision"]?.integerValue == 2)
            #expect(next["records"]?.arrayValue?.map { $0["id"] } == ["n2"])
            // The pusher's own commit came in its answer only: the change message of its commit,
            // handed over while the request was being answered, waited for the answer, which
            // covers it.
            let messages = await pusher.messages()
            #expect(messages.contains { $0["requestId"] == "p" })
            #expect(!messages.contains { $0["since"]?.integerValue == 0 })
            await pusher.close()
            await other.close()
        }
    }

    @Test func aBadMessageIsAnsweredWithAnErrorAndTheSocketStaysOpen() async throws {
        var fixture = try await SyncFixture()
        fixture.harness.clientLimits.maxChangesPerPush = 2
        try await fixture.onDocument { [fixture] _, port, id, token in
            let socket = ListenRecordsTests.socket(port, id, token: token)
            try await ListenRecordsTests.opened(socket)

            socket.send("not json")
            let notJSON = try #require(try await socket.message { $0["error"] != nil })
            #expect(notJSON["requestId"] == .null)
            #expect(notJSON["error"]?["status"]?.integerValue == 400)
            #expect(notJSON["error"]?["reason"]?.stringValue?.contains("not JSON") == true)

            socket.send(#"{"requestId": "s"}"#)
            let noSync = try #require(try await socket.message { $0["requestId"] == "s" })
            #expect(noSync["error"]?["status"]?.integerValue == 400)
            #expect(noSync["error"]?["reason"]?.stringValue?.hasPrefix("sync:") == true)

            let noClient = try await Self.request(socket, id: "c", ["baseRevision": 0])
            #expect(noClient["error"]?["reason"]?.stringValue?.hasPrefix("clientId:") == true)

            let tooMany = try await Self.request(
                socket, id: "m",
                Self.syncBody(client: "a", base: 0, pushID: 1, (1...3).map { put("n\($0)", noteContent()) }))
            #expect(tooMany["error"]?["status"]?.integerValue == 413)
            #expect(tooMany["error"]?["reason"]?.stringValue?.contains("--max-changes-per-push") == true)

            let longID = JSONValue.string(String(repeating: "r", count: 65))
            socket.send(
                JSONValue.object(["requestId": longID, "sync": Self.syncBody(client: "a", base: 0)]).serializedString())
            let badID = try #require(
                try await socket.message { $0["error"]?["reason"]?.stringValue?.hasPrefix("requestId:") == true })
            #expect(badID["requestId"] == .null)

            // A token without `write` has its changes rejected, as over HTTP.
            let reader = ListenRecordsTests.socket(
                port, id, token: try await fixture.token(id, user: "carol", permissions: ["read-document"]))
            try await ListenRecordsTests.opened(reader)
            let rejected = try await Self.request(
                reader, id: 1, Self.syncBody(client: "r", base: 0, pushID: 1, [put("r1", noteContent())]))
            #expect(rejected["answer"]?["rejected"]?.arrayValue?.first?["id"] == "r1")
            #expect(rejected["answer"]?["revision"]?.integerValue == 0)

            // After all that, the socket still takes a good push.
            let good = try await Self.request(
                socket, id: "g", Self.syncBody(client: "a", base: 0, pushID: 1, [put("n1", noteContent())]))
            #expect(good["answer"]?["revision"]?.integerValue == 1)
            await socket.close()
            await reader.close()
        }
    }

    @Test func aMessageOverTheSizeLimitClosesTheSocket() async throws {
        var fixture = try await SyncFixture()
        fixture.harness.clientLimits.maxSyncBodySize = 16 * 1024
        try await fixture.onDocument { _, port, id, token in
            let socket = ListenRecordsTests.socket(port, id, token: token)
            try await ListenRecordsTests.opened(socket)
            let text = String(repeating: "x", count: 40_000)
            socket.send(
                JSONValue.object([
                    "requestId": 1,
                    "sync": Self.syncBody(client: "a", base: 0, pushID: 1, [put("n1", noteContent(text: text))]),
                ]).serializedString())
            let close = try await socket.closedByServer()
            #expect(close?.closeCode == .messageTooLarge)
        }
    }
}
