import Foundation
import Testing

@testable import InstantServer

/// Uploads of real PDFs: the server reads them with InstantPDF and serves their own annotations
/// as the base records.
@Suite("Uploads of real PDFs")
struct PDFImportTests {
    static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/pdf-corpus")

    @Test func annotationsOfAnUploadedPDFBecomeRecords() async throws {
        let pdf = try Data(
            contentsOf: Self.corpus.appendingPathComponent("samplefiles/024-annotations/annotated_pdf.pdf"))
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(pdf)
            let annotations = try await client.request(.get, "/api/documents/\(id)/annotations")
            #expect(annotations.status == .ok)
            let records = annotations.data?["annotations"]?.arrayValue ?? []
            #expect(records.compactMap { $0["id"]?.stringValue } == ["p0a0", "p0a1", "p0a2"])
            #expect(
                records.compactMap { $0["content"]?["type"]?.stringValue } == [
                    "pspdfkit/note", "pspdfkit/markup/highlight", "pspdfkit/ink",
                ])
            let exported = try await client.request(.get, "/api/documents/\(id)/document.json")
            #expect(exported.json?["pdfId"]?["permanent"]?.stringValue == "YGBI5CqHEQZ2pCO2ItxWYg==")
            // A new named layer starts from the base records.
            #expect(try await client.json(.post, "/api/documents/\(id)/layers", ["name": "review"]).status == .ok)
            let layer = try await client.request(.get, "/api/documents/\(id)/layers/review/annotations")
            #expect(layer.data?["annotations"]?.arrayValue?.count == 3)
        }
    }

    @Test func formFieldsAndValuesOfAnUploadedForm() async throws {
        let pdf = try Data(contentsOf: Self.corpus.appendingPathComponent("pdfium/testing/resources/text_form.pdf"))
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(pdf)
            let values = try await client.request(.get, "/api/documents/\(id)/form-field-values")
            #expect(values.status == .ok)
            #expect(values.data?["formFieldValues"]?.arrayValue?.first?["name"]?.stringValue == "Text Box")
        }
    }

    @Test func encryptedAndDamagedUploadsAreRefusedWithTheReason() async throws {
        let encrypted = try Data(
            contentsOf: Self.corpus.appendingPathComponent("pypdf/resources/encryption/r4-aes-user-password.pdf"))
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let refused = try await client.request(
                .post, "/api/documents", headers: [.contentType: "application/pdf"], body: encrypted)
            #expect(refused.status == .unprocessableContent)
            #expect(refused.reason?.contains("encrypted") == true)
            let garbage = try await client.request(
                .post, "/api/documents", headers: [.contentType: "application/pdf"], body: Data("%PDF-1.7 nothing".utf8)
            )
            #expect(garbage.status == .unprocessableContent)
            #expect(garbage.reason?.contains("PDF") == true)
            let listed = try await client.request(.get, "/api/documents")
            #expect(listed.data?["documents"]?.arrayValue?.isEmpty ?? true)
        }
    }
}
