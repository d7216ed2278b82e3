import ArgumentParser
import AsyncHTTPClient
import Foundation
import InstantJSON
import InstantServer
import InstantTesting
import NIOCore
import NIOHTTP1

/// What hostile input costs the server (issue 13): the peak resident memory of a fresh
/// `instant serve` for each decompression bomb, and how long `/healthcheck` and sync take while
/// heavy PDF exports run.
struct HostileBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hostile",
        abstract: "Peak server memory for each PDF and PNG bomb; request latency during heavy exports.",
        discussion: """
            Starts `instant serve` (release build beside instant-bench) once per bomb, in a temporary \
            directory, with the default limits, and reads its peak resident memory (VmHWM) from /proc \
            after the request. Then starts one more and measures /healthcheck and sync latency while \
            concurrent exports decode a large PNG, and one more for the same while clients push sync \
            requests as large as the limits allow.
            """
    )

    @Option(help: "How long the latency measurement runs, in seconds.")
    var seconds = 20.0
    @Option(help: "Concurrent exports during the latency measurement.")
    var exports = 2
    @Option(help: "Clients pushing the largest sync requests during the latency measure of pushes.")
    var pushers = 2
    @Option(help: "Clients pulling a layer's tombstones during the latency measure of tombstones.")
    var pullers = 2
    @Flag(help: "Measure only the latency, not the bombs.")
    var latencyOnly = false
    @Option(help: "What loads the server while the latency is measured (repeat it; all by default).")
    var during: [Load] = Load.allCases

    /// What loads the server while `/healthcheck` and sync latency is measured.
    enum Load: String, CaseIterable, ExpressibleByArgument {
        /// Exports of a document with a large PNG.
        case exports
        /// Pushes of the most changes a push may have.
        case pushes
        /// Pulls of a layer's tombstones, by clients that were away while its records were deleted.
        case tombstones
    }

    func run() async throws {
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            print("\(ProcessInfo.processInfo.activeProcessorCount) cores")
            if !latencyOnly {
                for bomb in Self.bombs { try await measure(bomb, http: http) }
            }
            if during.contains(.exports) { try await latencyDuringExports(http: http) }
            if during.contains(.pushes) { try await latencyDuringLargePushes(http: http) }
            if during.contains(.tombstones) { try await latencyDuringTombstonePulls(http: http) }
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }

    /// A hostile request and what it needs.
    struct Bomb: Sendable {
        var name: String
        /// Sends the request to a server and returns the answer; the bytes sent.
        var send: @Sendable (Client) async throws -> (Client.Reply, Int)
    }

    static let mebibyte = 1 << 20
    static let gibibyte = 1 << 30

    static let bombs: [Bomb] = [
        upload(
            "flate + run-length, 4 GiB",
            HostilePDF.objectStreams([.init([.flate, .runLength], decodedSize: 4 * gibibyte)])),
        upload("flate + ASCII85, 1 GiB", HostilePDF.objectStreams([.init([.flate, .ascii85], decodedSize: gibibyte)])),
        upload(
            "flate + flate + run-length, 64 GiB",
            HostilePDF.objectStreams([.init([.flate, .flate, .runLength], decodedSize: 64 * gibibyte)])),
        upload("LZW, 1 GiB", HostilePDF.objectStreams([.init([.lzw], decodedSize: gibibyte)])),
        upload(
            "64 streams of 64 MiB (flate)",
            HostilePDF.objectStreams(Array(repeating: .init([.flate], decodedSize: 64 * mebibyte), count: 64))),
        upload(
            "predictor row of 10^12 columns",
            HostilePDF.objectStreams([
                .init([.flate], decodedSize: 64, parameters: "<< /Predictor 12 /Columns 1000000000000 >>")
            ])),
        upload("8,000,000 cross-reference entries", HostilePDF.crossReferenceEntries(8_000_000)),
        upload(
            "object stream: 60,000 × one array of 10,000", HostilePDF.objectStreamRepeats(60_000, elements: 10_000)),
        Bomb(name: "export: image annotation with a 20,000 × 20,000 palette PNG") { client in
            let png = HostilePNG.make(width: 20_000, height: 20_000, colorType: .palette, bitDepth: 1)
            let id = try await client.imageDocument(png)
            return (try await client.send(.GET, "/api/documents/\(id)/pdf"), png.count)
        },
    ]

    /// An upload of `pdf`.
    static func upload(_ name: String, _ pdf: Data) -> Bomb {
        Bomb(name: "upload: \(name)") { client in
            (try await client.send(.POST, "/api/documents", body: pdf, contentType: "application/pdf"), pdf.count)
        }
    }

    private func measure(_ bomb: Bomb, http: HTTPClient) async throws {
        let server = try await ServerUnderTest.start()
        defer { server.stop() }
        let client = Client(http: http, server: server)
        let before = server.peakResidentMemory() ?? 0
        let start = DispatchTime.now().uptimeNanoseconds
        let (reply, size) = try await bomb.send(client)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        print(
            String(
                format: "%@ (%@): %d in %.2f s, peak RSS %.0f MiB (%.0f MiB after start) — %@", bomb.name,
                Self.size(size), reply.status, seconds, Double(server.peakResidentMemory() ?? 0) / 1_048_576,
                Double(before) / 1_048_576, String(reply.reason.prefix(160))))
        try await documentPDFOfAStoredBomb(http: http, once: bomb.name == Self.bombs.first?.name)
    }

    /// A `download` client's `document.pdf` of a bomb stored while the server's limit was higher.
    private func documentPDFOfAStoredBomb(http: HTTPClient, once: Bool) async throws {
        guard once else { return }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("instant-bench-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let pdf = HostilePDF.objectStreams([.init([.flate, .runLength], decodedSize: 2 * Self.gibibyte)])
        let raised = try await ServerUnderTest.start(
            dataDirectory: directory,
            environment: [
                PDFProcessingConfiguration.Setting.maxDecodedBytes.environmentVariable: "\(4 * Self.gibibyte)"
            ])
        let stored = try await Client(http: http, server: raised).send(
            .POST, "/api/documents", body: pdf, contentType: "application/pdf")
        raised.stop()
        guard let id = stored.json?["data"]?["document_id"]?.stringValue else {
            throw BenchmarkError("The upload with a raised limit failed: \(stored.status) \(stored.reason)")
        }
        let server = try await ServerUnderTest.start(dataDirectory: directory)
        defer { server.stop() }
        let token = try await server.issuer.sign(
            ClientClaims(documentID: id, permissions: ["download"], expiration: Date().addingTimeInterval(600)))
        let before = server.peakResidentMemory() ?? 0
        let reply = try await Client(http: http, server: server).send(
            .GET, "/i/d/\(id)/document.pdf", authorization: "Token token=\"\(token)\"")
        print(
            String(
                format: "document.pdf: a stored 2 GiB bomb (%@): %d, peak RSS %.0f MiB (%.0f MiB after start) — %@",
                Self.size(pdf.count), reply.status, Double(server.peakResidentMemory() ?? 0) / 1_048_576,
                Double(before) / 1_048_576, String(reply.reason.prefix(160))))
    }

    /// `/healthcheck` and sync latency while `exports` clients export a document whose image
    /// annotation is a 7,000 × 7,000 RGB PNG (49 megapixels), one export after the other.
    private func latencyDuringExports(http: HTTPClient) async throws {
        let server = try await ServerUnderTest.start()
        defer { server.stop() }
        let client = Client(http: http, server: server)
        let id = try await client.imageDocument(HostilePNG.make(width: 7_000, height: 7_000, colorType: .rgb))
        let token = try await server.token(document: id, user: "latency")
        let (idle, busy, exported) = try await latency(of: client, id: id, token: token, loaders: exports) {
            _, deadline in
            var count = 0
            while Date() < deadline {
                let reply = try await client.send(.GET, "/api/documents/\(id)/pdf")
                if reply.status == 200 { count += 1 }
            }
            return count
        }
        Self.printLatency(
            idle: idle, "idle", busy: busy,
            "during \(exports) concurrent exports of a 49-megapixel PNG (\(exported) exports in \(Int(seconds)) s)",
            sync: "sync")
    }

    /// `/healthcheck` and sync latency (on a document of their own) while `pushers` clients push, one
    /// push after the other, sync requests as large as the default limits allow: the most changes a
    /// push may have (5,000 notes of about 1.6 KB, 8 MB in all), each answered with the other
    /// pushers' last changes.
    private func latencyDuringLargePushes(http: HTTPClient) async throws {
        let server = try await ServerUnderTest.start()
        defer { server.stop() }
        let client = Client(http: http, server: server)
        let (measured, measuredToken) = try await client.document(withTokenFor: "latency")
        let (pushed, pushedToken) = try await client.document(withTokenFor: "pusher")
        let limits = ClientLimits()
        let text = String(repeating: "x", count: 1_450)
        let changes = JSONValue.array(
            (0..<limits.maxChangesPerPush).map { index in
                [
                    "op": "put", "kind": "annotation", "id": .string("large-\(index)"),
                    "content": [
                        "v": 2, "type": "pspdfkit/note", "pageIndex": 0, "bbox": [10, 10, 20, 20],
                        "text": ["format": "plain", "value": .string(text)], "icon": "comment",
                    ],
                ]
            }
        ).serialized()
        let (idle, busy, pushes) = try await latency(
            of: client, id: measured, token: measuredToken, loaders: pushers
        ) { pusher, deadline in
            var (count, revision, pushID) = (0, Int64(0), Int64(0))
            while Date() < deadline {
                pushID += 1
                var body = Data(#"{"clientId":"pusher-\#(pusher)","baseRevision":\#(revision),"#.utf8)
                body += Data(#""pushId":\#(pushID),"changes":"#.utf8) + changes + Data("}".utf8)
                guard body.count <= limits.maxSyncBodySize else {
                    throw BenchmarkError("A push of \(body.count) bytes is over the sync body limit.")
                }
                let reply = try await client.send(
                    .POST, "/i/d/\(pushed)/sync", body: body, authorization: "Token token=\"\(pushedToken)\"",
                    readingJSON: false)
                guard reply.status == 200, let answered = reply.leadingRevision else {
                    throw BenchmarkError("A large push was answered \(reply.status).")
                }
                (count, revision) = (count + 1, answered)
            }
            return count
        }
        Self.printLatency(
            idle: idle, "idle, before the large pushes", busy: busy,
            "during \(pushers) clients pushing \(limits.maxChangesPerPush) changes (\(Self.size(changes.count))) "
                + "at a time (\(pushes) pushes in \(Int(seconds)) s)", sync: "sync on another document")
    }

    /// `/healthcheck` and sync latency (on a document of their own) while `pullers` clients pull, one
    /// pull after the other, a layer whose 40,000 notes were deleted, from revision 0: each answer
    /// carries 40,000 tombstones (5.1 MB of JSON), which have no content.
    private func latencyDuringTombstonePulls(http: HTTPClient) async throws {
        let server = try await ServerUnderTest.start()
        defer { server.stop() }
        let client = Client(http: http, server: server)
        let (measured, measuredToken) = try await client.document(withTokenFor: "latency")
        let (deleted, deletedToken) = try await client.document(withTokenFor: "deleter")
        let notes = 40_000
        let perPush = ClientLimits().maxChangesPerPush
        var (revision, pushID) = (Int64(0), Int64(0))
        for operation in ["put", "delete"] {
            for first in stride(from: 0, to: notes, by: perPush) {
                pushID += 1
                let changes = (first..<min(first + perPush, notes)).map { index -> JSONValue in
                    let id = JSONValue.string("gone-\(index)")
                    guard operation == "put" else { return ["op": "delete", "kind": "annotation", "id": id] }
                    let note: JSONValue = [
                        "v": 2, "type": "pspdfkit/note", "pageIndex": 0, "bbox": [10, 10, 20, 20], "icon": "comment",
                        "text": ["format": "plain", "value": "gone"],
                    ]
                    return ["op": "put", "kind": "annotation", "id": id, "content": note]
                }
                let push: JSONValue = [
                    "clientId": "deleter", "baseRevision": .integer(revision), "pushId": .integer(pushID),
                    "changes": .array(changes),
                ]
                let reply = try await client.send(
                    .POST, "/i/d/\(deleted)/sync", body: push.serialized(),
                    authorization: "Token token=\"\(deletedToken)\"", readingJSON: false)
                // Each push changes every note it names: one revision more, or a rejection.
                guard reply.status == 200, let answered = reply.leadingRevision, answered == revision + 1 else {
                    throw BenchmarkError(
                        "A push that prepares the tombstones was refused: \(reply.status) \(reply.reason).")
                }
                revision = answered
            }
        }
        let prepared = revision
        let (idle, busy, pulls) = try await latency(
            of: client, id: measured, token: measuredToken, loaders: pullers
        ) { puller, deadline in
            let away: JSONValue = ["clientId": .string("away-\(puller)"), "baseRevision": 0, "changes": []]
            var count = 0
            while Date() < deadline {
                let reply = try await client.send(
                    .POST, "/i/d/\(deleted)/sync", body: away.serialized(),
                    authorization: "Token token=\"\(deletedToken)\"", readingJSON: false)
                guard reply.status == 200, reply.leadingRevision == prepared else {
                    throw BenchmarkError("A pull of the tombstones was answered \(reply.status).")
                }
                count += 1
            }
            return count
        }
        Self.printLatency(
            idle: idle, "idle, before the pulls of tombstones", busy: busy,
            "during \(pullers) clients pulling the \(notes) tombstones of a layer from revision 0 (\(pulls) pulls in "
                + "\(Int(seconds)) s)", sync: "sync on another document")
    }

    /// The times of `/healthcheck` requests and of sync pulls, in milliseconds.
    typealias Samples = (health: [Double], sync: [Double])

    /// `/healthcheck` and a pull of the document `id`, sampled for 2 s with the server idle, then for
    /// `seconds` while `loaders` tasks load it, each running `load` (with its number and the
    /// deadline), which returns how many loads it ran: the samples of both, and the loads run.
    private func latency(
        of client: Client, id: String, token: String, loaders: Int,
        load: @escaping @Sendable (_ loader: Int, _ deadline: Date) async throws -> Int
    ) async throws -> (idle: Samples, busy: Samples, loads: Int) {
        let pull: JSONValue = ["clientId": "latency", "baseRevision": 0, "changes": []]
        let idle = try await samples(for: 2, client: client, id: id, token: token, pull: pull)
        let deadline = Date().addingTimeInterval(seconds)
        return try await withThrowingTaskGroup(of: Int.self) { group in
            for loader in 0..<loaders { group.addTask { try await load(loader, deadline) } }
            let busy = try await samples(for: seconds, client: client, id: id, token: token, pull: pull)
            return (idle, busy, try await group.reduce(0, +))
        }
    }

    /// Prints the latency sampled idle and during a load, on lines that `idleName` and `busyName` begin;
    /// `sync` names the pulls during the load.
    private static func printLatency(
        idle: Samples, _ idleName: String, busy: Samples,
        _ busyName: String, sync: String
    ) {
        print(idleName + ": " + line("/healthcheck", idle.health) + "; " + line("sync", idle.sync))
        print(busyName + ": " + line("/healthcheck", busy.health) + "; " + line(sync, busy.sync))
    }

    /// The median, 99th percentile and largest of `values`, in milliseconds.
    private static func line(_ name: String, _ values: [Double]) -> String {
        let sorted = values.sorted()
        let p99 = sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
        let p50 = sorted.isEmpty ? .nan : sorted[sorted.count / 2]
        return String(
            format: "%@ p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d requests)", name, p50, p99,
            sorted.last ?? .nan, sorted.count)
    }

    /// `/healthcheck` and sync pulls, one after the other every 20 ms, for `seconds`.
    private func samples(for seconds: Double, client: Client, id: String, token: String, pull: JSONValue)
        async throws -> Samples
    {
        var health: [Double] = []
        var sync: [Double] = []
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            health.append(try await Self.milliseconds { _ = try await client.send(.GET, "/healthcheck") })
            sync.append(
                try await Self.milliseconds {
                    _ = try await client.send(
                        .POST, "/i/d/\(id)/sync", body: pull.serialized(), authorization: "Token token=\"\(token)\"")
                })
            try await Task.sleep(for: .milliseconds(20))
        }
        return (health, sync)
    }

    private static func milliseconds(_ body: () async throws -> Void) async throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try await body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
    }

    private static func size(_ bytes: Int) -> String {
        bytes < 1_048_576
            ? String(format: "%.1f KB", Double(bytes) / 1000) : String(format: "%.1f MB", Double(bytes) / 1e6)
    }

    /// Requests to the server under test that answer with any status.
    struct Client: Sendable {
        let http: HTTPClient
        let server: ServerUnderTest

        struct Reply {
            var status: UInt
            var json: JSONValue?
            /// The first bytes of the body.
            var head: [UInt8]
            var reason: String { json?["error"]?["reason"]?.stringValue ?? "" }

            /// The revision a sync answer starts with (`{"revision":N,`), read without parsing the
            /// rest of the answer.
            var leadingRevision: Int64? {
                let prefix = Array(#"{"revision":"#.utf8)
                guard head.starts(with: prefix) else { return nil }
                return Int64(
                    String(decoding: head.dropFirst(prefix.count).prefix { $0 != UInt8(ascii: ",") }, as: UTF8.self))
            }
        }

        /// Sends a request; the answer's JSON is parsed unless `readingJSON` is false.
        func send(
            _ method: HTTPMethod, _ path: String, body: Data = Data(), authorization: String? = nil,
            contentType: String = "application/json", readingJSON: Bool = true
        ) async throws -> Reply {
            var request = HTTPClientRequest(url: server.baseURL.absoluteString + path)
            request.method = method
            request.headers.add(name: "Authorization", value: authorization ?? "Token token=\"\(server.apiToken)\"")
            request.headers.add(name: "Content-Type", value: contentType)
            if !body.isEmpty { request.body = .bytes(ByteBuffer(bytes: body)) }
            let response = try await http.execute(request, timeout: .seconds(600))
            let bytes = try await response.body.collect(upTo: 1 << 30)
            let json =
                readingJSON && response.headers.first(name: "Content-Type")?.hasPrefix("application/json") == true
                ? try? JSONValue(parsing: Data(buffer: bytes)) : nil
            return Reply(
                status: response.status.code, json: json, head: Array(bytes.readableBytesView.prefix(64)))
        }

        /// Uploads a document of `pages` pages; its id.
        func document(pages: Int) async throws -> String {
            let uploaded = try await send(
                .POST, "/api/documents", body: TestPDF.make(pageCount: pages), contentType: "application/pdf")
            guard let id = uploaded.json?["data"]?["document_id"]?.stringValue else {
                throw BenchmarkError("Upload failed: \(uploaded.status) \(uploaded.reason)")
            }
            return id
        }

        /// A one-page document, and a client token of `user` for it.
        func document(withTokenFor user: String) async throws -> (id: String, token: String) {
            let id = try await document(pages: 1)
            return (id, try await server.token(document: id, user: user))
        }

        /// A one-page document with an image annotation of `png`.
        func imageDocument(_ png: Data) async throws -> String {
            let id = try await document(pages: 1)
            let attachment = try await send(
                .POST, "/api/documents/\(id)/attachments", body: png, contentType: "image/png")
            guard let key = attachment.json?["data"]?["id"]?.stringValue else {
                throw BenchmarkError("Attachment upload failed: \(attachment.status) \(attachment.reason)")
            }
            let image: JSONValue = [
                "v": 2, "type": "pspdfkit/image", "pageIndex": 0, "bbox": [50, 50, 300, 300],
                "imageAttachmentId": .string(key), "contentType": "image/png",
                "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z",
            ]
            let created = try await send(
                .POST, "/api/documents/\(id)/annotations", body: JSONValue.object(["content": image]).serialized())
            guard created.status == 200 else {
                throw BenchmarkError("The image annotation was refused: \(created.status) \(created.reason)")
            }
            return id
        }
    }
}
