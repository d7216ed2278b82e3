import ArgumentParser
import Foundation
import Instant
import InstantJSON
import InstantServer
import InstantTesting

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The client SDK against a server in this process: a cold open (download of a large PDF and
/// many records) and the time a local edit takes to be committed.
struct SDKBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sdk",
        abstract: "Client SDK: cold open of a layer and local edit commit times."
    )

    @Option(help: "The PDF's size in megabytes.")
    var pdfMegabytes = 10
    @Option(help: "The layer's records.")
    var records = 10_000
    @Option(help: "Timed local edits.")
    var edits = 2_000

    func run() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("instant-bench-sdk-\(UUID())")
        defer { try? FileManager.default.removeItem(at: root) }
        let storage = try InstantStorage.sqlite(directory: root.appendingPathComponent("server"))
        let key = try await TestSigningKey(.es256)
        let server = try await InstantTestServer.start(
            storage: storage, importer: InstantPDFImporter(), jwt: key.jwtConfiguration,
            maxBodySize: 1 << 30)
        let pdf = TestPDF.make(pageCount: 10, contentSize: pdfMegabytes * 1_000_000)
        let document = StoredDocument(
            id: "bench", title: nil, sourcePDFSHA256: Attachment.key(for: pdf), byteSize: pdf.count,
            pages: Array(repeating: PageInfo(width: 612, height: 792), count: 10), pdfID: nil,
            isPasswordProtected: false, createdAt: Date())
        let note = Annotation(uncheckedJSON: [
            "v": 2, "type": "pspdfkit/note", "pageIndex": 0, "bbox": [10, 20, 30, 40], "icon": "comment",
            "text": ["format": "plain", "value": "benchmark note"], "color": "#FFD700",
        ])
        let writes = (0..<records).map { RecordWrite(id: "r\($0)", kind: .annotation, content: note.serialized()) }
        try await storage.createDocument(document, pdf: pdf, baseRecords: writes)
        print(String(format: "layer: %.1f MB PDF, %d records", Double(pdf.count) / 1e6, records))

        let jwt = try await key.token(
            ClientClaims(
                documentID: "bench", permissions: ["read-document", "write", "download"], userID: "bench",
                expiration: Date().addingTimeInterval(3600)))
        let client = try InstantClient(
            serverURL: server.baseURL, dataDirectory: root.appendingPathComponent("client"))
        let descriptor = try client.documentDescriptor(forJWT: jwt)
        let start = ContinuousClock.now
        try descriptor.download(usingJWT: jwt)
        while descriptor.documentState != .clean {
            guard descriptor.documentState == .unknown else { throw BenchmarkError("The download failed.") }
            try await Task.sleep(for: .microseconds(200))
        }
        let open = ContinuousClock.now - start
        let count = try descriptor.editableDocument.annotations().count
        print(
            String(
                format: "cold open (download PDF + records, stored): %.1f ms, %d annotations", open.milliseconds, count)
        )

        try descriptor.setDelayForSyncingLocalChanges(.instantSyncingLocalChangesDisabled)
        let editable = descriptor.editableDocument
        var samples: [Double] = []
        for index in 0..<edits {
            var annotation = note
            annotation.id = "edit-\(index)"
            let begin = ContinuousClock.now
            try editable.add(annotation)
            samples.append((ContinuousClock.now - begin).milliseconds)
        }
        let result = Percentiles(samples)
        print(
            String(format: "local edit committed: p50 %.3f ms, p99 %.3f ms (%d edits)", result.p50, result.p99, edits))
        await server.stop()
    }
}

extension Duration {
    /// The duration in milliseconds.
    var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }
}
