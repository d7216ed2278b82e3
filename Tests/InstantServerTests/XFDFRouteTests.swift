import Foundation
import InstantJSON
import InstantPDF
import InstantTesting
import Testing

@testable import InstantServer

/// `GET .../document.xfdf`, `POST .../apply_xfdf` and XFDF attached to an upload.
@Suite("XFDF routes", .timeLimit(.minutes(10)))
struct XFDFRouteTests {
    static let square = """
        <?xml version="1.0" encoding="UTF-8"?>
        <xfdf xmlns="http://ns.adobe.com/xfdf/" xml:space="preserve">
          <annots>
            <square page="0" rect="100,600,200,700" name="sq-1" color="#FF0000" width="2" title="Grace">
              <contents>From XFDF</contents>
            </square>
            <text page="0" rect="100,680,120,700" name="reply-1" inreplyto="sq-1" title="Ada">
              <contents>A reply</contents>
            </text>
          </annots>
          <fields><field name="unknown"><value>v</value></field></fields>
        </xfdf>
        """

    @Test func aLayerIsExportedAndAppliedAsXFDF() async throws {
        let pdf = TestPDF.annotated()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(pdf)
            _ = try await client.json(.post, "/api/documents/\(id)/annotations", ["content": noteContent(id: "added")])
            _ = try await client.json(
                .post, "/api/documents/\(id)/annotations/added/comments",
                ["comments": [["id": "c-1", "content": ["text": ["format": "plain", "value": "On the note"]]]]])

            let export = try await client.request(.get, "/api/documents/\(id)/document.xfdf")
            #expect(export.status == .ok)
            #expect(export.headers[.contentType] == "application/vnd.adobe.xfdf")
            #expect(export.headers[.contentDisposition]?.hasSuffix(".xfdf\"") == true)
            let records = try PDFDocument(data: pdf).xfdfRecords(export.body).records
            #expect(
                records.annotations.map(\.type.rawValue).sorted() == [
                    "pspdfkit/ink", "pspdfkit/markup/highlight", "pspdfkit/note", "pspdfkit/note",
                ])
            #expect(records.annotations.contains { $0.id == "added" })
            #expect(records.comments.map(\.text?.value) == ["On the note"])
            #expect(records.comments.first?.rootId == "added")

            // Applied to a layer that has only the PDF's originals, it adds the note and its comment.
            _ = try await client.json(.post, "/api/documents/\(id)/layers", ["name": "copy"])
            let applied = try await client.request(
                .post, "/api/documents/\(id)/layers/copy/apply_xfdf",
                headers: [.contentType: "application/vnd.adobe.xfdf"], body: export.body)
            #expect(applied.status == .ok, "\(applied.reason ?? "")")
            #expect(applied.data?["revision"]?.integerValue ?? 0 > 1)
            let copied = try await client.request(.get, "/api/documents/\(id)/layers/copy/annotations/added")
            #expect(copied.status == .ok)
            let comments = try await client.request(.get, "/api/documents/\(id)/layers/copy/annotations/added/comments")
            #expect(comments.data?["comments"]?.arrayValue?.count == 1)
            // Applying it again changes nothing but the revision: the records have the same ids.
            let again = try await client.request(
                .post, "/api/documents/\(id)/layers/copy/apply_xfdf", body: export.body)
            #expect(again.status == .ok)
            let listed = try await client.request(.get, "/api/documents/\(id)/layers/copy/annotations")
            #expect(listed.data?["annotations"]?.arrayValue?.count == 4)

            // A broken file is refused with its line, and changes nothing.
            let broken = try await client.request(
                .post, "/api/documents/\(id)/layers/copy/apply_xfdf",
                body: Data("<xfdf>\n<annots>\n<square page=\"0\" rect=\"1,2\"/></annots></xfdf>".utf8))
            #expect(broken.status == .unprocessableContent)
            #expect(broken.reason?.contains("XFDF line 3: <square>: 'rect' must be 4 numbers") == true)
            let empty = try await client.request(.post, "/api/documents/\(id)/layers/copy/apply_xfdf", body: Data())
            #expect(empty.status == .badRequest)
            let missing = try await client.request(.get, "/api/documents/nope/document.xfdf")
            #expect(missing.status == .notFound)
        }
    }

    @Test func xfdfAttachedToAnUploadReplacesOrKeepsTheOriginals() async throws {
        let pdf = TestPDF.annotated()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            func upload(_ id: String, xfdf: String, keep: Bool? = nil) async throws -> ServerHarness.Client.Reply {
                var parts: [(name: String, filename: String?, type: String?, data: Data)] = [
                    ("file", "a.pdf", "application/pdf", pdf), ("document_id", nil, nil, Data(id.utf8)),
                    ("attachment", "a.xfdf", "application/vnd.adobe.xfdf", Data(xfdf.utf8)),
                ]
                if let keep { parts.append(("keep_current_annotations", nil, nil, Data(String(keep).utf8))) }
                return try await client.request(
                    .post, "/api/documents", headers: [.contentType: "multipart/form-data; boundary=zz"],
                    body: ServerHarness.Client.multipart(boundary: "zz", parts: parts))
            }
            func annotationTypes(_ id: String) async throws -> [String] {
                let reply = try await client.request(.get, "/api/documents/\(id)/annotations")
                return reply.data?["annotations"]?.arrayValue?.compactMap { $0["content"]?["type"]?.stringValue } ?? []
            }
            let replaced = try await upload("replaced", xfdf: Self.square)
            #expect(replaced.status == .ok, "\(replaced.reason ?? "")")
            #expect(try await annotationTypes("replaced") == ["pspdfkit/shape/rectangle"])
            let thread = try await client.request(.get, "/api/documents/replaced/annotations/sq-1/comments")
            #expect(thread.data?["comments"]?.arrayValue?.first?["content"]?["text"]?["value"] == "A reply")
            let values = try await client.request(.get, "/api/documents/replaced/form-field-values")
            #expect(values.status == .ok)

            let kept = try await upload("kept", xfdf: Self.square, keep: true)
            #expect(kept.status == .ok)
            #expect(
                try await annotationTypes("kept").sorted()
                    == ["pspdfkit/ink", "pspdfkit/markup/highlight", "pspdfkit/note", "pspdfkit/shape/rectangle"])

            let refused = try await upload(
                "refused", xfdf: "<xfdf><annots><square page=\"4\" rect=\"1,2,3,4\"/></annots></xfdf>")
            #expect(refused.status == .unprocessableContent)
            #expect(refused.reason?.contains("page 4 is not in the document") == true)
            #expect(try await client.request(.get, "/api/documents/refused").status == .notFound)
        }
    }
}
