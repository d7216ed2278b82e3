import Foundation
import HTTPTypes
import InstantJSON
import InstantTesting
import NIOPosix
import Testing

@testable import InstantServer

/// Large sync requests and answers are parsed, checked and written away from the event loops, and
/// come out as small ones do.
@Suite("Large JSON work off the event loops", .timeLimit(.minutes(10)))
struct LargeWorkTests {
    /// Whether the caller runs on an event loop.
    @Sendable static func onAnEventLoop() -> Bool { MultiThreadedEventLoopGroup.currentEventLoop != nil }

    @Test func workOnManyBytesLeavesTheEventLoopAndWorkOnFewStays() async throws {
        let executor = EventLoopTaskExecutor(MultiThreadedEventLoopGroup.singleton.next())
        let (small, large, smallWriting, largeWriting) = try await withTaskExecutorPreference(executor) {
            #expect(Self.onAnEventLoop(), "the test runs on the loop")
            return (
                try await LargeWork.run(bytes: LargeWork.threshold - 1, Self.onAnEventLoop),
                try await LargeWork.run(bytes: LargeWork.threshold, Self.onAnEventLoop),
                try await LargeWork.run(writing: LargeWork.writingThreshold - 1, Self.onAnEventLoop),
                try await LargeWork.run(writing: LargeWork.writingThreshold, Self.onAnEventLoop)
            )
        }
        #expect(small, "below the threshold the work runs where it was called")
        #expect(!large, "at the threshold it runs on the blocking pool")
        #expect(smallWriting && !largeWriting, "writing JSON has a threshold of its own")
        await #expect(throws: APIError.self) {
            try await LargeWork.run(bytes: LargeWork.threshold) { throw APIError.badRequest("refused") }
        }
    }

    /// A push over the threshold, over HTTP and on the WebSocket, is applied and answered as a small
    /// one; a client that pulls it, a snapshot (both over the threshold of writing) and an Instant
    /// JSON export get every record.
    @Test func largePushesPullsAndSnapshotsAreAnsweredInFull() async throws {
        let fixture = try await SyncFixture()
        try await fixture.onDocument { client, port, id, token in
            let text = String(repeating: "a long note ", count: 400)
            let changes = (0..<120).map { put("h\($0)", noteContent(text: text)) }
            #expect(try changes.reduce(0) { $0 + $1.serialized().count } > LargeWork.threshold)
            #expect(240 * text.utf8.count > LargeWork.writingThreshold, "a pull of both pushes")

            let alice = SyncClient(client, documentID: id, token: token, clientID: "a")
            let pushed = try await alice.sync(changes)
            #expect(pushed.status == .ok)
            #expect(pushed.rejections.isEmpty)
            #expect(pushed.records.count == 120, "the answer settles every change")
            #expect(pushed.records["h7"]?["content"]?["text"]?["value"]?.stringValue == text)

            let socket = ListenRecordsTests.socket(port, id, since: 1, token: token)
            try await ListenRecordsTests.opened(socket)
            let onSocket = (0..<120).map { put("s\($0)", noteContent(text: text)) }
            let reply = try await SocketSyncTests.request(
                socket, id: "large", SocketSyncTests.syncBody(client: "s", base: 1, pushID: 1, onSocket))
            #expect(reply["answer"]?["revision"]?.integerValue == 2)
            #expect(reply["answer"]?["records"]?.arrayValue?.count == 120)
            await socket.close()

            let pulled = try await SyncClient(client, documentID: id, token: token, clientID: "b").sync()
            #expect(pulled.json?["revision"]?.integerValue == 2)
            #expect(Set(pulled.records.keys) == Set((0..<120).flatMap { ["h\($0)", "s\($0)"] }))
            let snapshot = try await client.request(
                .get, "/i/d/\(id)/snapshot", headers: [.authorization: "Token token=\"\(token)\""], apiToken: nil)
            #expect(snapshot.json?["records"]?.arrayValue?.count == 240)
            #expect(snapshot.json?["records"] == pulled.json?["records"], "a snapshot lists what a pull from 0 does")
            let exported = try await client.request(.get, "/api/documents/\(id)/document.json")
            #expect(exported.status == .ok)
            #expect(exported.json?["annotations"]?.arrayValue?.count == 240, "the Instant JSON export has them all")

            let broken = try await client.request(
                .post, "/i/d/\(id)/sync", headers: [.authorization: "Token token=\"\(token)\""],
                body: Data(("{\"clientId\": \"x\", \"changes\": [" + String(repeating: "1,", count: 100_000)).utf8),
                apiToken: nil)
            #expect(broken.status == .badRequest)
            #expect(broken.reason?.contains("not valid JSON") == true, "\(broken.reason ?? "")")
        }
    }

    /// An attachment over the threshold is hashed off the loop and stored under its SHA-256; a
    /// path that names other bytes is refused.
    @Test func aLargeAttachmentIsStoredUnderItsHash() async throws {
        let fixture = try await SyncFixture()
        try await fixture.onDocument { client, _, id, token in
            let png =
                Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
                + Data((0..<LargeWork.threshold).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let sha = Attachment.key(for: png)
            let headers: HTTPFields = [.authorization: "Token token=\"\(token)\"", .contentType: "image/png"]
            let stored = try await client.request(
                .put, "/i/d/\(id)/attachments/\(sha)", headers: headers, body: png, apiToken: nil)
            #expect(stored.status == .ok, "\(stored.reason ?? "")")
            #expect(stored.data?["id"]?.stringValue == sha)
            let download = try await client.request(.get, "/api/documents/\(id)/attachments/\(sha)")
            #expect(download.body == png)
            let wrong = try await client.request(
                .put, "/i/d/\(id)/attachments/\(String(repeating: "0", count: 64))", headers: headers, body: png,
                apiToken: nil)
            #expect(wrong.status == .unprocessableContent)
            #expect(wrong.reason?.contains(sha) == true, "the refusal names the body's hash")
        }
    }
}
