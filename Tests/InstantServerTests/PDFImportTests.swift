import Foundation
import InstantPDF
import InstantTesting
import Testing

@testable import InstantServer

/// Uploads of PDFs with annotations, a form or encryption: the server reads them with InstantPDF
/// and serves their own annotations and form values as the base records.
@Suite("Uploads of PDFs with annotations, forms or encryption", .timeLimit(.minutes(10)))
struct PDFImportTests {
    @Test func annotationsOfAnUploadedPDFBecomeRecords() async throws {
        let pdf = TestPDF.annotated()
        let pdfId = try #require(try PDFDocument(data: pdf).originalRecords().pdfId)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(pdf)
            let annotations = try await client.request(.get, "/api/documents/\(id)/annotations")
            #expect(annotations.status == .ok)
            let records = annotations.data?["annotations"]?.arrayValue ?? []
            let types = records.reduce(into: [String: String]()) { types, record in
                types[record["id"]?.stringValue ?? ""] = record["content"]?["type"]?.stringValue
            }
            #expect(types == ["5": "pspdfkit/note", "p0a2": "pspdfkit/markup/highlight", "7": "pspdfkit/ink"])
            let exported = try await client.request(.get, "/api/documents/\(id)/document.json")
            #expect(exported.json?["pdfId"]?["permanent"]?.stringValue == pdfId.permanent)
            // A new named layer starts from the base records.
            #expect(try await client.json(.post, "/api/documents/\(id)/layers", ["name": "review"]).status == .ok)
            let layer = try await client.request(.get, "/api/documents/\(id)/layers/review/annotations")
            #expect(layer.data?["annotations"]?.arrayValue?.count == 3)
        }
    }

    @Test func formFieldsAndValuesOfAnUploadedForm() async throws {
        let pdf = TestPDF.form()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(pdf)
            let values = try await client.request(.get, "/api/documents/\(id)/form-field-values")
            #expect(values.status == .ok)
            let fieldValues = values.data?["formFieldValues"]?.arrayValue ?? []
            #expect(fieldValues.compactMap { $0["name"]?.stringValue }.sorted() == ["Filled Box", "Text Box"])
            #expect(fieldValues.first { $0["name"]?.stringValue == "Filled Box" }?["value"]?.stringValue == "Filled in")
        }
    }

    @Test func encryptedAndDamagedUploadsAreRefusedWithTheReason() async throws {
        let encrypted = TestPDF.passwordProtected()
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
