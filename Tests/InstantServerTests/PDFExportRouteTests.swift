import Foundation
import InstantJSON
import InstantPDF
import InstantTesting
import Testing

@testable import InstantServer

/// `GET .../pdf`, `POST .../pdf_with_instant_json` and the client's `document.pdf`: the layer's
/// records written into the PDF.
@Suite("PDF export routes", .timeLimit(.minutes(10)))
struct PDFExportRouteTests {
    @Test func layerRecordsAreWrittenIntoThePDF() async throws {
        let pdf = TestPDF.annotated()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(pdf)
            // The originals come back as they were.
            let untouched = try await client.request(.get, "/api/documents/\(id)/pdf")
            #expect(untouched.status == .ok)
            #expect(untouched.headers[.contentType] == "application/pdf")
            #expect(try PDFDocument(data: untouched.body).annotations().map(\.type) == [.note, .highlight, .ink])

            // A new annotation on a named layer, and an original deleted there.
            _ = try await client.json(.post, "/api/documents/\(id)/layers", ["name": "review"])
            _ = try await client.json(
                .post, "/api/documents/\(id)/layers/review/annotations", ["content": noteContent(id: "added")])
            // The highlight, written directly into /Annots: its id is its position.
            _ = try await client.request(.delete, "/api/documents/\(id)/layers/review/annotations/p0a2")
            let layerPDF = try await client.request(.get, "/api/documents/\(id)/layers/review/pdf")
            let written = try PDFDocument(data: layerPDF.body)
            #expect(written.annotations().map(\.type) == [.note, .ink, .note])
            #expect(written.annotations().last?.text?.value == noteContent(id: "added")["text"]?["value"]?.stringValue)
            #expect(layerPDF.body.prefix(pdf.count) == pdf)
            // The default layer did not change.
            let defaultLayer = try await client.request(.get, "/api/documents/\(id)/pdf")
            #expect(try PDFDocument(data: defaultLayer.body).annotations().count == 3)

            let without = try await client.request(.get, "/api/documents/\(id)/layers/review/pdf?annotations=false")
            #expect(try PDFDocument(data: without.body).annotations().isEmpty)
            let flat = try await client.request(.get, "/api/documents/\(id)/layers/review/pdf?flatten=true")
            #expect(try PDFDocument(data: flat.body).annotations().isEmpty)

            let conflicting = try await client.request(.get, "/api/documents/\(id)/pdf?source=true&flatten=true")
            #expect(conflicting.status == .badRequest)
            let badFlag = try await client.request(.get, "/api/documents/\(id)/pdf?flatten=maybe")
            #expect(badFlag.status == .badRequest)
            #expect(badFlag.reason?.contains("flatten") == true)
        }
    }

    @Test func uploadedInstantJSONIsAppliedWithoutChangingTheLayer() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 2))
            let instant: JSONValue = [
                "format": "https://pspdfkit.com/instant-json/v1",
                "annotations": [noteContent(id: "from-json")],
            ]
            let boundary = "b-\(UUID().uuidString)"
            let body = ServerHarness.Client.multipart(
                boundary: boundary,
                parts: [
                    (name: "instant.json", filename: "instant.json", type: "application/json", data: instant.encoded())
                ])
            let reply = try await client.request(
                .post, "/api/documents/\(id)/pdf_with_instant_json",
                headers: [.contentType: "multipart/form-data; boundary=\(boundary)"], body: body)
            #expect(reply.status == .ok, "\(reply.reason ?? "")")
            #expect(try PDFDocument(data: reply.body).annotations().count == 1)
            let layer = try await client.request(.get, "/api/documents/\(id)/annotations")
            #expect(layer.data?["annotations"]?.arrayValue?.isEmpty == true)

            let broken: JSONValue = [
                "format": "https://pspdfkit.com/instant-json/v1", "annotations": [["type": "pspdfkit/note"]],
            ]
            let invalid = try await client.request(
                .post, "/api/documents/\(id)/pdf_with_instant_json", headers: [.contentType: "application/json"],
                body: broken.encoded())
            #expect(invalid.status == .unprocessableContent)
            #expect(invalid.reason?.contains("annotations[0]") == true)
        }
    }

    @Test func clientsNeedTheDownloadPermission() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let key = try await TestSigningKey(.es256)
        var harness = ServerHarness(directory: directory.url)
        harness.jwt = key.jwtConfiguration
        try await harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            _ = try await client.json(.post, "/api/documents/\(id)/annotations", ["content": noteContent(id: "n")])
            func fetch(_ permissions: [String]) async throws -> ServerHarness.Client.Reply {
                let jwt = try await key.token(
                    ClientClaims(documentID: id, permissions: permissions, expiration: Date().addingTimeInterval(600)))
                return try await client.request(
                    .get, "/i/d/\(id)/document.pdf", headers: [.authorization: "Token token=\"\(jwt)\""], apiToken: nil)
            }
            let refused = try await fetch(["read-document"])
            #expect(refused.status == .forbidden)
            #expect(refused.reason?.contains("download") == true)
            let allowed = try await fetch(["download"])
            #expect(allowed.status == .ok)
            #expect(try PDFDocument(data: allowed.body).annotations().map(\.id) != [])
        }
    }
}
