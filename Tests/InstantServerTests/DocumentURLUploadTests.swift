import Foundation
import Hummingbird
import InstantJSON
import InstantTesting
import Logging
import ServiceLifecycle
import Testing

@testable import InstantServer

/// `POST /api/documents` with a `url`: the server fetches the PDF from a real HTTP server, within
/// its time and size limits.
@Suite("Documents added from a URL", .timeLimit(.minutes(10)))
struct DocumentURLUploadTests {
    /// A small HTTP server that serves a PDF, a slow answer, a large file and a 404.
    struct FileServer {
        let port: Int
        let group: ServiceGroup
        let task: Task<Void, Error>

        static func start() async throws -> FileServer {
            let router = Router()
            router.get("file.pdf") { _, _ in
                Response(
                    status: .ok, headers: [.contentType: "application/pdf"],
                    body: .init(byteBuffer: ByteBuffer(bytes: TestPDF.annotated())))
            }
            router.get("slow.pdf") { _, _ in
                try await Task.sleep(for: .seconds(30))
                return Response(status: .ok)
            }
            router.get("big.pdf") { _, _ in
                Response(
                    status: .ok, body: .init(byteBuffer: ByteBuffer(bytes: [UInt8](repeating: 0x25, count: 300_000))))
            }
            var logger = Logger(label: "file-server")
            logger.logLevel = .error
            let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
            let app = Application(
                router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { channel in
                    continuation.yield(channel.localAddress?.port ?? 0)
                    continuation.finish()
                }, logger: logger)
            let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
            let task = Task { try await group.run() }
            var port = 0
            for await value in ports {
                port = value
                break
            }
            return FileServer(port: port, group: group, task: task)
        }

        func url(_ name: String) -> String { "http://127.0.0.1:\(port)/\(name)" }

        func stop() async {
            await group.triggerGracefulShutdown()
            task.cancel()
            _ = try? await task.value
        }
    }

    @Test func aDocumentIsFetchedFromItsURLWithinLimits() async throws {
        let files = try await FileServer.start()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var harness = ServerHarness(directory: directory.url)
        // A time limit that a small file on loopback meets even on a busy machine; the slow answer
        // is checked below with a short one.
        harness.documentDownload = DocumentDownloadConfiguration(timeout: .seconds(30), maxBytes: 100_000)
        try await harness.run { client in
            let created = try await client.json(
                .post, "/api/documents",
                ["url": .string(files.url("file.pdf")), "document_id": "fetched", "title": "From afar"])
            #expect(created.status == .ok, "\(created.reason ?? "")")
            #expect(created.data?["document_id"] == "fetched")
            let stored = try await client.request(.get, "/api/documents/fetched/pdf")
            #expect(stored.body == TestPDF.annotated())
            let properties = try await client.request(.get, "/api/documents/fetched/properties")
            #expect(properties.data?["title"] == "From afar")

            let multipart = try await client.request(
                .post, "/api/documents", headers: [.contentType: "multipart/form-data; boundary=zz"],
                body: ServerHarness.Client.multipart(
                    boundary: "zz",
                    parts: [
                        ("url", nil, nil, Data(files.url("file.pdf").utf8)),
                        ("document_id", nil, nil, Data("form".utf8)),
                    ]))
            #expect(multipart.status == .ok, "\(multipart.reason ?? "")")
            #expect(try await client.request(.get, "/api/documents/form/pdf").body == TestPDF.annotated())

            let big = try await client.json(.post, "/api/documents", ["url": .string(files.url("big.pdf"))])
            #expect(big.status == .contentTooLarge)
            #expect(big.reason?.contains("100000 bytes") == true)
            let missing = try await client.json(.post, "/api/documents", ["url": .string(files.url("missing.pdf"))])
            #expect(missing.status == .unprocessableContent)
            #expect(missing.reason?.contains("404") == true)
            for url in ["file:///etc/passwd", "ftp://example.com/a.pdf", "not a url", ""] {
                let refused = try await client.json(.post, "/api/documents", ["url": .string(url)])
                #expect(refused.status == .badRequest, "\(url)")
            }
            let noURL = try await client.json(.post, "/api/documents", ["title": "nothing"])
            #expect(noURL.status == .badRequest)
        }
        harness.documentDownload = DocumentDownloadConfiguration(timeout: .seconds(1), maxBytes: 100_000)
        try await harness.run { client in
            let slow = try await client.json(.post, "/api/documents", ["url": .string(files.url("slow.pdf"))])
            #expect(slow.status == .unprocessableContent)
            #expect(slow.reason?.contains("within 1 s") == true, "\(slow.reason ?? "")")
        }
        await files.stop()
    }

    @Test func hostsCanBeRestrictedAndDownloadsTurnedOff() async throws {
        let files = try await FileServer.start()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var harness = ServerHarness(directory: directory.url)
        harness.documentDownload = DocumentDownloadConfiguration(allowedHosts: ["files.example.com"])
        try await harness.run { client in
            let refused = try await client.json(.post, "/api/documents", ["url": .string(files.url("file.pdf"))])
            #expect(refused.status == .badRequest)
            #expect(refused.reason?.contains("files.example.com") == true)
        }
        harness.documentDownload = DocumentDownloadConfiguration(isEnabled: false)
        try await harness.run { client in
            let off = try await client.json(.post, "/api/documents", ["url": .string(files.url("file.pdf"))])
            #expect(off.status == .unsupportedMediaType)
        }
        await files.stop()
    }
}
