import Foundation
import Hummingbird
import InstantJSON
import InstantTesting
import Testing

@testable import InstantServer

@Suite("Comment, form field value, bookmark and attachment routes", .timeLimit(.minutes(10)))
struct OtherRecordRoutesTests {
    @Test func formFieldValues() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let base = "/api/documents/\(id)/form-field-values"
            let set = try await client.json(
                .post,
                base,
                ["formFieldValues": [["name": "email", "value": "a@b.c"], ["name": "choices", "value": ["x", "y"]]]]
            )
            #expect(set.status == .ok, "\(set.reason ?? "")")
            _ = try await client.json(.post, base, ["formFieldValues": [["name": "email", "value": "new@b.c"]]])
            let values = try #require(try await client.request(.get, base).data?["formFieldValues"]?.arrayValue)
            #expect(values.count == 2)
            #expect(values.first { $0["name"]?.stringValue == "email" }?["value"]?.stringValue == "new@b.c")
            #expect(values.first { $0["name"]?.stringValue == "choices" }?["value"] == ["x", "y"])

            let missingValue = try await client.json(.post, base, ["formFieldValues": [["name": "email"]]])
            #expect(missingValue.status == .unprocessableContent)
            let missingName = try await client.json(.post, base, ["formFieldValues": [["value": "x"]]])
            #expect(missingName.reason == "formFieldValues[0].name: required key is missing")
        }
    }

    @Test func bookmarks() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 3))
            let base = "/api/documents/\(id)/bookmarks"
            let content: JSONValue = [
                "v": 1, "type": "pspdfkit/bookmark", "name": "Intro", "action": ["type": "goTo", "pageIndex": 2],
            ]
            let created = try await client.json(.post, base, ["id": "bm", "content": content])
            #expect(created.status == .ok)
            #expect(created.data?["id"]?.stringValue == "bm")
            var renamed = content.objectValue!
            renamed["name"] = "Start"
            #expect(try await client.json(.put, "\(base)/bm", ["content": .object(renamed)]).status == .ok)
            #expect(try await client.json(.put, "\(base)/other", ["content": content]).status == .notFound)
            let list = try await client.request(.get, base)
            #expect(list.data?["bookmarks"]?.arrayValue?.first?["content"]?["name"]?.stringValue == "Start")
            let noAction = try await client.json(.post, base, ["content": ["v": 1, "type": "pspdfkit/bookmark"]])
            #expect(noAction.status == .unprocessableContent)
            #expect(try await client.request(.delete, "\(base)/bm").status == .ok)
            #expect(try await client.request(.get, base).data?["bookmarks"]?.arrayValue?.isEmpty == true)
        }
    }

    @Test func commentThreads() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 2))
            _ = try await client.json(
                .post, "/api/documents/\(id)/annotations", ["content": noteContent(page: 1, id: "root")])
            let base = "/api/documents/\(id)/annotations/root/comments"
            let created = try await client.json(
                .post,
                base,
                ["comments": [["content": ["text": ["format": "plain", "value": "Looks good"]], "user_id": "carol"]]]
            )
            #expect(created.status == .ok, "\(created.reason ?? "")")
            let comment = try #require(created.data?["comments"]?.arrayValue?.first)
            #expect(comment["content"]?["rootId"]?.stringValue == "root")
            #expect(comment["content"]?["pageIndex"]?.integerValue == 1)
            #expect(comment["createdBy"]?.stringValue == "carol")

            let thread = try await client.request(.get, base)
            #expect(thread.data?["comments"]?.arrayValue?.count == 1)
            #expect(
                try await client.request(.get, "/api/documents/\(id)/annotations/none/comments").status == .notFound)
            let noText = try await client.json(.post, base, ["comments": [["content": [:]]]])
            #expect(noText.status == .unprocessableContent)
            let plainText = try await client.json(.post, base, ["comments": [["content": ["text": "plain string"]]]])
            #expect(plainText.status == .unprocessableContent)
            #expect(plainText.reason?.hasPrefix("comments[0].content.text:") == true)

            let export = try await client.request(.get, "/api/documents/\(id)/document.json")
            #expect(export.json?["comments"]?.arrayValue?.count == 1)

            // Deleting the annotation through REST deletes its thread, as a sync client's deletion does.
            #expect(try await client.request(.delete, "/api/documents/\(id)/annotations/root").status == .ok)
            let after = try await client.request(.get, "/api/documents/\(id)/document.json")
            #expect(after.status == .ok)
            let comments = after.json?["comments"]?.arrayValue
            #expect(comments?.isEmpty ?? true)
        }
    }

    @Test func attachmentsByHash() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let image = Data((0..<300).map { UInt8($0 % 251) })
            let upload = try await client.request(
                .post,
                "/api/documents/\(id)/attachments",
                headers: [.contentType: "image/png"],
                body: image
            )
            #expect(upload.data?["id"]?.stringValue == Attachment.key(for: image))
            let download = try await client.request(
                .get, "/api/documents/\(id)/attachments/\(Attachment.key(for: image))")
            #expect(download.status == .ok)
            #expect(download.body == image)
            #expect(download.headers[.contentType] == "image/png")
            let missing = try await client.request(
                .get, "/api/documents/\(id)/attachments/\(Attachment.key(for: Data([1])))")
            #expect(missing.status == .notFound)
        }
    }
}
