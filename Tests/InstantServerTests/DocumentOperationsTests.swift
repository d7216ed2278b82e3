import Foundation
import InstantJSON
import InstantPDF
import InstantTesting
import Testing

@testable import InstantServer

/// `document_info`, `outline.json`, bulk deletion, copies and threads created in one request.
@Suite("Document operations", .timeLimit(.minutes(10)))
struct DocumentOperationsTests {
    @Test func documentInfoAndOutline() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(TestPDF.outlined())
            for path in ["/api/documents/\(id)/document_info", "/api/documents/\(id)/layers/review/document_info"] {
                let info = try await client.request(.get, path)
                #expect(info.status == .ok, "\(info.reason ?? "")")
                let data = try #require(info.data)
                #expect(data["pageCount"] == 2)
                #expect(data["pages"]?.arrayValue?[0]["pageLabel"] == "i")
                #expect(data["pages"]?.arrayValue?[1]["pageLabel"] == "A-5")
                #expect(data["pages"]?.arrayValue?[1]["rotation"] == 90)
                #expect(data["pages"]?.arrayValue?[0]["rawPdfBoxes"]?["trimBox"] == [10, 10, 602, 782])
                #expect(data["metadata"]?["author"] == "Ada")
                #expect(data["metadata"]?["dateCreated"] == "2026-01-01T12:00:00Z")
                #expect(data["permissions"]?["print"] == true)
                #expect(data["hasXFA"] == false)
            }
            let outline = try await client.request(.get, "/api/documents/\(id)/outline.json")
            #expect(outline.status == .ok)
            let items = try #require(outline.data?["outline"]?.arrayValue)
            #expect(items.map { $0["title"]?.stringValue } == ["Chapter 1", "Web"])
            #expect(items.first?["type"] == "pspdfkit/outline-element")
            #expect(items.first?["action"]?["type"] == "goTo")
            #expect(items.first?["children"]?.arrayValue?[0]["title"] == "Section 1.1")
            #expect(items.last?["action"]?["uri"] == "https://example.com")
            let missing = try await client.request(.get, "/api/documents/nope/outline.json")
            #expect(missing.status == .notFound)
        }
    }

    @Test func documentsAreDeletedByFilter() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            func upload(_ id: String, title: String) async throws {
                let reply = try await client.request(
                    .post, "/api/documents", headers: [.contentType: "multipart/form-data; boundary=zz"],
                    body: ServerHarness.Client.multipart(
                        boundary: "zz",
                        parts: [
                            ("file", "a.pdf", "application/pdf", TestPDF.make(pageCount: 1)),
                            ("document_id", nil, nil, Data(id.utf8)), ("title", nil, nil, Data(title.utf8)),
                        ]))
                #expect(reply.status == .ok)
            }
            try await upload("draft-1", title: "Draft contract")
            try await upload("draft-2", title: "Another draft")
            try await upload("final", title: "Final contract")

            let none = try await client.request(.delete, "/api/documents")
            #expect(none.status == .badRequest)
            #expect(none.reason == "missing_filter_parameters")
            #expect(none.json?["error"]?["description"]?.stringValue?.contains("at least one filter") == true)
            let badDate = try await client.request(.delete, "/api/documents?start_date=yesterday")
            #expect(badDate.status == .badRequest)
            #expect(badDate.reason == "invalid_start_date")

            let drafts = try await client.request(.delete, "/api/documents?title=draft")
            #expect(drafts.status == .ok)
            #expect(drafts.json?["deleted_count"] == 2)
            #expect(drafts.json?["total_matched"] == 2)
            #expect(drafts.json?["skipped_count"] == 0)
            #expect(try await client.request(.get, "/api/documents/draft-1").status == .notFound)
            #expect(try await client.request(.get, "/api/documents/final").status == .ok)

            let future = try await client.request(.delete, "/api/documents?start_date=2999-01-01T00:00:00Z")
            #expect(future.json?["total_matched"] == 0)
            let byID = try await client.request(
                .delete, "/api/documents?document_id=final&end_date=2999-01-01T00:00:00Z")
            #expect(byID.json?["deleted_count"] == 1)
            #expect(try await client.request(.get, "/api/documents/final").status == .notFound)
        }
    }

    @Test func copiesKeepEveryLayerOrOneWithInstantJSON() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(TestPDF.annotated())
            _ = try await client.json(.post, "/api/documents/\(id)/annotations", ["content": noteContent(id: "mine")])
            _ = try await client.json(.post, "/api/documents/\(id)/layers", ["name": "review"])
            _ = try await client.json(
                .post, "/api/documents/\(id)/layers/review/annotations", ["content": noteContent(id: "theirs")])
            func ids(_ document: String, layer: String? = nil) async throws -> [String] {
                let path = "/api/documents/\(document)\(layer.map { "/layers/\($0)" } ?? "")/annotations"
                let reply = try await client.request(.get, path)
                return reply.data?["annotations"]?.arrayValue?.compactMap { $0["id"]?.stringValue }.sorted() ?? []
            }

            let copy = try await client.json(
                .post, "/api/copy_document", ["document_id": .string(id), "new_document_id": "copy"])
            #expect(copy.status == .ok, "\(copy.reason ?? "")")
            #expect(copy.data?["document_id"] == "copy")
            #expect(try await ids("copy") == (try await ids(id)))
            #expect(try await ids("copy", layer: "review").contains("theirs"))
            #expect(!(try await ids("copy")).contains("theirs"))
            let pdf = try await client.request(.get, "/api/documents/copy/pdf?source=true")
            #expect(pdf.body == TestPDF.annotated())
            // The copy is its own document: deleting the original leaves it whole.
            _ = try await client.request(.delete, "/api/documents/\(id)")
            #expect(try await client.request(.get, "/api/documents/copy/pdf?source=true").status == .ok)
            let again = try await client.json(
                .post, "/api/copy_document", ["document_id": "copy", "new_document_id": "copy"])
            #expect(again.status == .conflict)
            let missing = try await client.json(.post, "/api/copy_document", ["document_id": "gone"])
            #expect(missing.status == .notFound)

            let instant: JSONValue = [
                "format": "https://pspdfkit.com/instant-json/v1", "annotations": [noteContent(id: "added")],
            ]
            let layered = try await client.request(
                .post, "/api/documents/copy/layers/review/copy_with_instant_json",
                headers: [.contentType: "application/json"], body: instant.encoded())
            #expect(layered.status == .ok, "\(layered.reason ?? "")")
            let newID = try #require(layered.json?["documentId"]?.stringValue)
            #expect(layered.json?["sourcePdfSha256"]?.stringValue == Attachment.key(for: TestPDF.annotated()))
            let copied = try await ids(newID)
            #expect(copied.contains("theirs") && copied.contains("added") && !copied.contains("mine"))
            #expect(try await ids("copy", layer: "review").contains("added") == false)
        }
    }

    @Test func aThreadIsCreatedWithItsComments() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let created = try await client.json(
                .post, "/api/documents/\(id)/comments",
                [
                    "annotation": ["id": "marker", "content": noteContent()],
                    "comments": [
                        ["content": ["text": ["format": "plain", "value": "First"]]],
                        [
                            "id": "second", "content": ["text": ["format": "plain", "value": "Second"]],
                            "user_id": "ada",
                        ],
                    ],
                ])
            #expect(created.status == .ok, "\(created.reason ?? "")")
            #expect(created.data?["annotation"]?["id"] == "marker")
            #expect(created.data?["comments"]?.arrayValue?.count == 2)
            #expect(created.data?["comments"]?.arrayValue?[1]["id"] == "second")
            let root = try await client.request(.get, "/api/documents/\(id)/annotations/marker")
            #expect(root.json?["content"]?["isCommentThreadRoot"] == true)
            let thread = try await client.request(.get, "/api/documents/\(id)/annotations/marker/comments")
            #expect(
                thread.data?["comments"]?.arrayValue?.compactMap { $0["content"]?["text"]?["value"]?.stringValue } == [
                    "First", "Second",
                ])

            let invalid = try await client.json(
                .post, "/api/documents/\(id)/comments",
                ["annotation": ["content": noteContent(page: 4)], "comments": [["content": ["text": "x"]]]])
            #expect(invalid.status == .unprocessableContent)
            let noComments = try await client.json(
                .post, "/api/documents/\(id)/comments", ["annotation": ["content": noteContent()], "comments": []])
            #expect(noComments.status == .badRequest)
        }
    }
}
