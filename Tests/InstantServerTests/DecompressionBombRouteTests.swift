import Foundation
import InstantJSON
import InstantPDF
import InstantTesting
import Testing

@testable import InstantServer

/// Uploads and exports refuse PDFs and images beyond the server's PDF limits with 422 and a reason
/// that names the limit and the option that raises it (issue 13, finding 2). The server runs with
/// small limits, so that the code without them would accept these bombs at little cost.
@Suite("Decompression bombs at the routes", .timeLimit(.minutes(10)))
struct DecompressionBombRouteTests {
    static let mebibyte = 1 << 20
    /// Small, so that a refusal costs the server little: in a full test run, where every test
    /// starts at once on two cores, decoding 4 MiB before refusing took 24 s of a debug build.
    static let small = PDFProcessingConfiguration(
        limits: PDFLimits(maxDecodedBytes: mebibyte, maxImagePixels: 10_000))

    /// A PDF whose script streams decode to `size` zero bytes through flate and run-length filters
    /// (compressed on a thread of its own: it takes seconds in a debug build).
    static func bomb(decoding size: Int) async -> Data {
        await onOwnThread { HostilePDF.objectStreams([.init([.flate, .runLength], decodedSize: size)]) }
    }

    @Test func uploadOfABombIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var harness = ServerHarness(directory: directory.url)
        harness.pdfProcessing = Self.small
        try await harness.run { client in
            let reply = try await client.request(
                .post, "/api/documents", headers: [.contentType: "application/pdf"],
                body: await Self.bomb(decoding: 16 * Self.mebibyte))
            #expect(reply.status == .unprocessableContent)
            let reason = try #require(reply.reason)
            #expect(reason.contains("more than \(Self.mebibyte) bytes"))
            #expect(reason.contains("--pdf-max-decoded-bytes") && reason.contains("PDF_MAX_DECODED_BYTES"))
            #expect(try await client.request(.get, "/api/documents").json?["document_count"] == 0)
        }
    }

    @Test func exportWithAnImageOfTooManyPixelsIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var harness = ServerHarness(directory: directory.url)
        harness.pdfProcessing = Self.small
        try await harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let png = HostilePNG.make(width: 200, height: 200, colorType: .palette, bitDepth: 1)
            let attachment = try await client.request(
                .post, "/api/documents/\(id)/attachments", headers: [.contentType: "image/png"], body: png)
            let attachmentID = try #require(attachment.data?["id"]?.stringValue)
            var image = noteContent(id: "big-image").objectValue!
            image["type"] = "pspdfkit/image"
            image["imageAttachmentId"] = .string(attachmentID)
            image["contentType"] = "image/png"
            let created = try await client.json(
                .post, "/api/documents/\(id)/annotations", ["content": .object(image)])
            #expect(created.status == .ok, "\(created.reason ?? "")")

            let reply = try await client.request(.get, "/api/documents/\(id)/pdf")
            #expect(reply.status == .unprocessableContent)
            let reason = try #require(reply.reason)
            #expect(reason.contains("200 × 200 pixels") && reason.contains("10000 pixels"))
            #expect(reason.contains("--pdf-max-image-pixels") && reason.contains("PDF_MAX_IMAGE_PIXELS"))
        }
    }

    /// A document stored when the limits allowed it: a `download` client's export under smaller
    /// limits is refused, not decoded. (Stored directly rather than uploaded under larger limits:
    /// in a full test run, importing it took longer than the test client waits for an answer.)
    @Test func clientDocumentPDFOfABombIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let key = try await TestSigningKey(.es256)
        let id = try await InstantStorage.sqlite(directory: directory.url)
            .storeDocument(await Self.bomb(decoding: 2 * Self.mebibyte))
        var harness = ServerHarness(directory: directory.url)
        harness.jwt = key.jwtConfiguration
        harness.pdfProcessing = Self.small
        try await harness.run { client in
            let jwt = try await key.token(
                ClientClaims(documentID: id, permissions: ["download"], expiration: Date().addingTimeInterval(600)))
            let reply = try await client.request(
                .get, "/i/d/\(id)/document.pdf", headers: [.authorization: "Token token=\"\(jwt)\""], apiToken: nil)
            #expect(reply.status == .unprocessableContent)
            #expect(reply.reason?.contains("--pdf-max-decoded-bytes") == true)
        }
    }
}
