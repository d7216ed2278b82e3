import Foundation
import Hummingbird
import InstantJSON
import InstantTesting
import Testing

@testable import InstantServer

@Suite("Layer, annotation and Instant JSON routes", .timeLimit(.minutes(10)))
struct RecordRoutesTests {
    @Test(arguments: ["", "/layers/review"])
    func annotationLifecycle(layerPath: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 2))
            if !layerPath.isEmpty {
                #expect(try await client.json(.post, "/api/documents/\(id)/layers", ["name": "review"]).status == .ok)
            }
            let base = "/api/documents/\(id)\(layerPath)"

            let single = try await client.json(
                .post,
                "\(base)/annotations",
                ["content": noteContent(page: 0, text: "first"), "user_id": "alice", "group": "team"]
            )
            #expect(single.status == .ok, "\(single.reason ?? "")")
            let firstID = try #require(single.data?["annotation_id"]?.stringValue)
            #expect(firstID.count == 26)

            let many = try await client.json(
                .post,
                "\(base)/annotations",
                ["annotations": [["content": noteContent(page: 1, text: "second"), "id": "second-id"]]]
            )
            #expect(many.status == .ok)
            #expect(many.data?.arrayValue?.first?["id"]?.stringValue == "second-id")

            let duplicate = try await client.json(
                .post,
                "\(base)/annotations",
                ["content": noteContent(), "id": "second-id"]
            )
            #expect(duplicate.status == .conflict)

            let fetched = try await client.request(.get, "\(base)/annotations/\(firstID)")
            #expect(fetched.json?["content"]?["text"]?["value"]?.stringValue == "first")
            #expect(fetched.json?["content"]?["id"]?.stringValue == firstID)
            #expect(fetched.json?["createdBy"]?.stringValue == "alice")
            #expect(fetched.json?["group"]?.stringValue == "team")

            let all = try await client.request(.get, "\(base)/annotations")
            #expect(all.data?["annotations"]?.arrayValue?.count == 2)
            #expect(all.data?["truncated"]?.boolValue == false)
            let firstPage = try await client.request(.get, "\(base)/annotations?limit=1")
            #expect(firstPage.data?["truncated"]?.boolValue == true)
            let pageOne = try await client.request(.get, "\(base)/pages/1/annotations")
            #expect(pageOne.data?["annotations"]?.arrayValue?.map { $0["id"]?.stringValue } == ["second-id"])
            #expect(try await client.request(.get, "\(base)/pages/7/annotations").status == .notFound)

            let ndjson = try await client.request(
                .get,
                "\(base)/annotations",
                headers: [.accept: "application/x-ndjson"]
            )
            let lines = String(decoding: ndjson.body, as: UTF8.self).split(separator: "\n")
            #expect(lines.count == 2)
            #expect(lines.allSatisfy { (try? JSONValue.parse(Data($0.utf8)))?["id"] != nil })

            let update = try await client.json(
                .put,
                "\(base)/annotations/\(firstID)",
                ["content": noteContent(page: 0, text: "changed"), "user_id": "bob"]
            )
            #expect(update.status == .ok)
            let changed = try await client.request(.get, "\(base)/annotations/\(firstID)")
            #expect(changed.json?["content"]?["text"]?["value"]?.stringValue == "changed")
            #expect(changed.json?["createdBy"]?.stringValue == "alice")
            #expect(changed.json?["updatedBy"]?.stringValue == "bob")

            let bulk = try await client.json(
                .put,
                "\(base)/annotations",
                ["annotations": [["id": "second-id", "content": noteContent(page: 1, text: "bulk")]]]
            )
            #expect(bulk.status == .ok)
            let missingUpdate = try await client.json(
                .put,
                "\(base)/annotations/nope",
                ["content": noteContent()]
            )
            #expect(missingUpdate.status == .notFound)

            #expect(try await client.request(.delete, "\(base)/annotations/\(firstID)").status == .ok)
            #expect(try await client.request(.get, "\(base)/annotations/\(firstID)").status == .notFound)
            #expect(try await client.request(.delete, "\(base)/annotations/\(firstID)").status == .notFound)
            #expect(try await client.json(.delete, "\(base)/annotations", ["annotationIds": "all"]).status == .ok)
            #expect(
                try await client.request(.get, "\(base)/annotations").data?["annotations"]?.arrayValue?.isEmpty == true)
        }
    }

    @Test func invalidAnnotationsAreRefusedWithTheirPath() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let base = "/api/documents/\(id)/annotations"
            var badBBox = noteContent().objectValue!
            badBBox["bbox"] = [1, 2, 3]
            let reply = try await client.json(
                .post, base, ["annotations": [["content": noteContent()], ["content": .object(badBBox)]]])
            #expect(reply.status == .unprocessableContent)
            #expect(
                reply.reason
                    == "annotations[1].content.bbox: expected 4 numbers (a rectangle [left, top, width, height])")

            let pastLastPage = try await client.json(.post, base, ["content": noteContent(page: 5)])
            #expect(pastLastPage.status == .unprocessableContent)
            #expect(pastLastPage.reason?.hasPrefix("body.content.pageIndex") == true)

            let notJSON = try await client.request(
                .post,
                base,
                headers: [.contentType: "application/json"],
                body: Data("{\"content\": ".utf8)
            )
            #expect(notJSON.status == .badRequest)
            // Nothing of the refused batch was written.
            #expect(try await client.request(.get, base).data?["annotations"]?.arrayValue?.isEmpty == true)
        }
    }

    @Test func layersCreateCopyListAndDelete() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            _ = try await client.json(
                .post, "/api/documents/\(id)/annotations", ["content": noteContent(id: "on-default")])

            #expect(try await client.json(.post, "/api/documents/\(id)/layers", ["name": "empty"]).status == .ok)
            let copy = try await client.json(
                .post,
                "/api/documents/\(id)/layers",
                ["name": "copy", "source_layer_name": ""]
            )
            #expect(copy.data?["name"]?.stringValue == "copy")
            #expect(try await client.json(.post, "/api/documents/\(id)/layers", ["name": "copy"]).status == .badRequest)
            #expect(try await client.json(.post, "/api/documents/\(id)/layers", ["name": "a*"]).status == .badRequest)
            #expect(
                try await client.json(.post, "/api/documents/\(id)/layers", ["name": "x", "source_layer_name": "none"])
                    .status == .notFound
            )

            let layers = try await client.request(.get, "/api/documents/\(id)/layers")
            #expect(layers.data == ["copy", "empty"])
            let copied = try await client.request(.get, "/api/documents/\(id)/layers/copy/annotations")
            #expect(copied.data?["annotations"]?.arrayValue?.map { $0["id"]?.stringValue } == ["on-default"])
            let empty = try await client.request(.get, "/api/documents/\(id)/layers/empty/annotations")
            #expect(empty.data?["annotations"]?.arrayValue?.isEmpty == true)

            #expect(try await client.request(.delete, "/api/documents/\(id)/layers/copy").status == .ok)
            #expect(try await client.request(.delete, "/api/documents/\(id)/layers/copy").status == .notFound)
            // A named layer that does not exist mirrors the base records (none here).
            let mirror = try await client.request(.get, "/api/documents/\(id)/layers/copy/annotations")
            #expect(mirror.status == .ok)
            #expect(mirror.data?["annotations"]?.arrayValue?.isEmpty == true)
        }
    }

    @Test func instantJSONExportAndImport() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 2))
            let image = Data([0x89, 0x50, 0x4E, 0x47, 0, 1, 2, 3])
            var stamp = noteContent(page: 1, id: "stamp-1").objectValue!
            stamp["type"] = "pspdfkit/image"
            stamp["imageAttachmentId"] = .string(Attachment.key(for: image))
            let document: JSONValue = [
                "format": "https://pspdfkit.com/instant-json/v1",
                "annotations": [noteContent(page: 0, id: "n-1"), .object(stamp)],
                "formFieldValues": [["v": 1, "type": "pspdfkit/form-field-value", "name": "email", "value": "a@b.c"]],
                "bookmarks": [
                    ["v": 1, "type": "pspdfkit/bookmark", "id": "bm-1", "action": ["type": "goTo", "pageIndex": 1]]
                ],
                "attachments": .object([
                    Attachment.key(for: image): [
                        "binary": .string(image.base64EncodedString()), "contentType": "image/png",
                    ]
                ]),
            ]
            let multipart = ServerHarness.Client.multipart(
                boundary: "B0",
                parts: [("instant.json", "instant.json", "application/json", document.encoded())]
            )
            let applied = try await client.request(
                .post,
                "/api/documents/\(id)/apply_instant_json",
                headers: [.contentType: "multipart/form-data; boundary=B0"],
                body: multipart
            )
            #expect(applied.status == .ok, "\(applied.reason ?? "")")

            let exported = try await client.request(.get, "/api/documents/\(id)/document.json")
            let json = try #require(exported.json)
            #expect(json["format"]?.stringValue == "https://pspdfkit.com/instant-json/v1")
            #expect(
                Set(json["annotations"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []) == ["n-1", "stamp-1"])
            #expect(json["formFieldValues"]?.arrayValue?.first?["value"]?.stringValue == "a@b.c")
            #expect(json["bookmarks"]?.arrayValue?.first?["id"]?.stringValue == "bm-1")
            #expect(
                json["attachments"]?[Attachment.key(for: image)]?["binary"]?.stringValue == image.base64EncodedString())

            // Strict mode: one bad record refuses the whole file and writes nothing.
            let bad: JSONValue = [
                "format": "https://pspdfkit.com/instant-json/v1",
                "annotations": [noteContent(page: 0, id: "n-2"), ["v": 2, "type": "pspdfkit/note", "pageIndex": 0]],
            ]
            let strict = try await client.json(.post, "/api/documents/\(id)/apply_instant_json", bad)
            #expect(strict.status == .unprocessableContent)
            #expect(strict.reason == "annotations[1].bbox: required key is missing")
            #expect(try await client.request(.get, "/api/documents/\(id)/annotations/n-2").status == .notFound)

            let wrongFormat = try await client.json(.post, "/api/documents/\(id)/apply_instant_json", ["format": "x"])
            #expect(wrongFormat.status == .unprocessableContent)

            // Lenient mode applies the good records and lists the bad ones.
            let lenient = try await client.json(.post, "/api/documents/\(id)/apply_instant_json?lenient=true", bad)
            #expect(lenient.status == .ok)
            #expect(lenient.data?["errors"]?.arrayValue?.count == 1)
            #expect(try await client.request(.get, "/api/documents/\(id)/annotations/n-2").status == .ok)

            // The layer routes export their own layer.
            _ = try await client.json(.post, "/api/documents/\(id)/layers", ["name": "other"])
            let otherExport = try await client.request(.get, "/api/documents/\(id)/layers/other/document.json")
            #expect(otherExport.json?["annotations"] == nil)
        }
    }

    @Test func baseRecordsAndSkippedPDFObjectIDs() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let storage = try InstantStorage.sqlite(directory: directory.url)
            let pdf = TestPDF.make(pageCount: 1)
            func base(_ objectID: Int) -> RecordWrite {
                var content = noteContent(id: String(objectID)).objectValue!
                content["pdfObjectId"] = .integer(Int64(objectID))
                return RecordWrite(
                    id: String(objectID),
                    kind: .annotation,
                    pdfObjectID: objectID,
                    content: JSONValue.object(content).encoded()
                )
            }
            try await storage.createDocument(
                StoredDocument(
                    id: "doc",
                    title: nil,
                    sourcePDFSHA256: Attachment.key(for: pdf),
                    byteSize: pdf.count,
                    pages: [PageInfo(width: 612, height: 792)],
                    pdfID: DocumentPDFID(permanent: "cGVybWFuZW50", changing: "Y2hhbmdpbmc="),
                    isPasswordProtected: false,
                    createdAt: Date()
                ),
                pdf: pdf,
                baseRecords: [base(12), base(13), base(14)]
            )
        }
        try await ServerHarness(directory: directory.url).run { client in
            let untouched = try await client.request(.get, "/api/documents/doc/document.json")
            #expect(untouched.json?["skippedPdfObjectIds"] == nil)
            #expect(untouched.json?["annotations"]?.arrayValue?.count == 3)
            #expect(untouched.json?["pdfId"]?["permanent"]?.stringValue == "cGVybWFuZW50")

            _ = try await client.json(.post, "/api/documents/doc/layers", ["name": "fresh"])
            var changed = noteContent(text: "edited").objectValue!
            changed["pdfObjectId"] = 12
            #expect(
                try await client.json(.put, "/api/documents/doc/annotations/12", ["content": .object(changed)]).status
                    == .ok)
            #expect(try await client.request(.delete, "/api/documents/doc/annotations/13").status == .ok)

            let export = try await client.request(.get, "/api/documents/doc/document.json")
            #expect(export.json?["skippedPdfObjectIds"] == [12, 13])
            let exported = export.json?["annotations"]?.arrayValue ?? []
            #expect(Set(exported.compactMap { $0["id"]?.stringValue }) == ["12", "14"])
            #expect(exported.first { $0["id"]?.stringValue == "12" }?["text"]?["value"]?.stringValue == "edited")

            // A fresh layer still mirrors the PDF.
            let fresh = try await client.request(.get, "/api/documents/doc/layers/fresh/document.json")
            #expect(fresh.json?["skippedPdfObjectIds"] == nil)
            #expect(fresh.json?["annotations"]?.arrayValue?.count == 3)

            // Importing skippedPdfObjectIds removes those originals from the layer.
            let skipping: JSONValue = ["format": "https://pspdfkit.com/instant-json/v1", "skippedPdfObjectIds": [14]]
            #expect(
                try await client.json(.post, "/api/documents/doc/layers/fresh/apply_instant_json", skipping).status
                    == .ok)
            let after = try await client.request(.get, "/api/documents/doc/layers/fresh/document.json")
            #expect(after.json?["skippedPdfObjectIds"] == [14])
            #expect(after.json?["annotations"]?.arrayValue?.count == 2)
        }
    }
}
