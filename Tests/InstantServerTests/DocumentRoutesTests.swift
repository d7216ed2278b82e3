import Foundation
import Hummingbird
import InstantJSON
import InstantTesting
import Testing

@testable import InstantServer

@Suite("Document routes", .timeLimit(.minutes(10)))
struct DocumentRoutesTests {
    @Test func healthcheckAndAPITokenAuth() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let health = try await client.request(.get, "/healthcheck", apiToken: nil)
            #expect(health.status == .ok)

            let missing = try await client.request(.get, "/api/documents", apiToken: nil)
            #expect(missing.status == .unauthorized)
            #expect(missing.reason?.contains("API token") == true)
            let wrong = try await client.request(.get, "/api/documents", apiToken: "nope")
            #expect(wrong.status == .unauthorized)
            let unquoted = try await client.request(
                .get,
                "/api/documents",
                headers: [.authorization: "Token token=\(ServerHarness.apiToken)"]
            )
            #expect(unquoted.status == .ok)

            let metrics = try await client.request(.get, "/metrics", apiToken: nil)
            #expect(metrics.status == .ok)
            let text = String(decoding: metrics.body, as: UTF8.self)
            #expect(text.contains("instant_http_requests_total{"))
            #expect(text.contains("route=\"/healthcheck\""))
            #expect(text.contains("status=\"401\""))
            #expect(text.contains("instant_http_request_duration_seconds_bucket{"))
        }
    }

    @Test func uploadReadListAndDelete() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let pdf = TestPDF.make(pageCount: 3)
        try await ServerHarness(directory: directory.url).run { client in
            let upload = try await client.request(
                .post, "/api/documents", headers: [.contentType: "application/pdf"], body: pdf)
            #expect(upload.status == .ok)
            let id = try #require(upload.data?["document_id"]?.stringValue)
            #expect(upload.data?["sourcePdfSha256"]?.stringValue == Attachment.key(for: pdf))
            #expect(upload.data?["password_protected"]?.boolValue == false)
            #expect(upload.data?["errors"]?.arrayValue?.isEmpty == true)

            let properties = try await client.request(.get, "/api/documents/\(id)/properties")
            #expect(properties.status == .ok)
            #expect(properties.data?["byteSize"]?.integerValue == Int64(pdf.count))
            #expect(properties.data?["pageCount"]?.integerValue == 3)
            #expect(properties.data?["storage"]?["type"]?.stringValue == "built-in")
            #expect(try await client.request(.get, "/api/documents/\(id)").data?["id"]?.stringValue == id)

            let list = try await client.request(.get, "/api/documents")
            #expect(list.json?["document_count"]?.integerValue == 1)
            #expect(list.data?.arrayValue?.count == 1)

            #expect(try await client.request(.delete, "/api/documents/\(id)").status == .ok)
            #expect(try await client.request(.get, "/api/documents/\(id)/properties").status == .notFound)
            #expect(try await client.request(.delete, "/api/documents/\(id)").status == .notFound)
        }
    }

    @Test func multipartUploadWithIDTitleAndSharedBytes() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let pdf = TestPDF.make(pageCount: 1)
        try await ServerHarness(directory: directory.url).run { client in
            for (id, title) in [("contract-1", "Contract"), ("contract-2", "Copy")] {
                let body = ServerHarness.Client.multipart(
                    boundary: "XyZ",
                    parts: [
                        ("file", "contract.pdf", "application/pdf", pdf),
                        ("document_id", nil, nil, Data(id.utf8)),
                        ("title", nil, nil, Data(title.utf8)),
                    ]
                )
                let reply = try await client.request(
                    .post,
                    "/api/documents",
                    headers: [.contentType: "multipart/form-data; boundary=XyZ"],
                    body: body
                )
                #expect(reply.status == .ok, "\(reply.reason ?? "")")
                #expect(reply.data?["document_id"]?.stringValue == id)
                #expect(reply.data?["title"]?.stringValue == title)
            }
            let files = try FileManager.default.contentsOfDirectory(
                atPath: directory.url.appendingPathComponent("pdfs").path
            )
            #expect(files == ["\(Attachment.key(for: pdf)).pdf"])

            // The same id twice is refused.
            let again = try await client.request(
                .post,
                "/api/documents",
                headers: [.contentType: "multipart/form-data; boundary=XyZ"],
                body: ServerHarness.Client.multipart(
                    boundary: "XyZ",
                    parts: [("file", nil, nil, pdf), ("document_id", nil, nil, Data("contract-1".utf8))]
                )
            )
            #expect(again.status == .conflict)

            let sorted = try await client.request(.get, "/api/documents?order_by=title&order_direction=asc&page_size=1")
            #expect(sorted.data?.arrayValue?.first?["title"]?.stringValue == "Contract")
            let next = try #require(sorted.json?["next_cursor"]?.stringValue)
            let second = try await client.request(
                .get,
                "/api/documents?order_by=title&order_direction=asc&page_size=1&cursor=\(next)"
            )
            #expect(second.data?.arrayValue?.first?["title"]?.stringValue == "Copy")
            #expect(second.json?["next_cursor"] == .null)
            let counted = try await client.request(.get, "/api/documents?page_size=1&count_remaining=true")
            #expect(counted.json?["prev_document_count"] == 0)
            #expect(counted.json?["next_document_count"] == 1)
            #expect(try await client.request(.get, "/api/documents?page_size=0").status == .badRequest)
            #expect(try await client.request(.get, "/api/documents?cursor=%%%").status == .badRequest)
            #expect(try await client.request(.get, "/api/documents?order_by=size").status == .badRequest)
        }
    }

    @Test func sourcePDFWithRangesAndETag() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let pdf = TestPDF.make(pageCount: 2)
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(pdf)
            let full = try await client.request(.get, "/api/documents/\(id)/pdf?source=true")
            #expect(full.status == .ok)
            #expect(full.body == pdf)
            let etag = try #require(full.headers[.eTag])

            let range = try await client.request(
                .get,
                "/api/documents/\(id)/pdf?source=true",
                headers: [.range: "bytes=0-7"]
            )
            #expect(range.status == .partialContent)
            #expect(range.body == pdf.prefix(8))
            #expect(range.headers[.contentRange] == "bytes 0-7/\(pdf.count)")
            let suffix = try await client.request(
                .get,
                "/api/documents/\(id)/pdf?source=true",
                headers: [.range: "bytes=-6"]
            )
            #expect(suffix.body == pdf.suffix(6))

            let hugeEnd = try await client.request(
                .get,
                "/api/documents/\(id)/pdf?source=true",
                headers: [.range: "bytes=4-\(Int.max)"]
            )
            #expect(hugeEnd.status == .partialContent)
            #expect(hugeEnd.body == pdf.dropFirst(4))

            let notModified = try await client.request(
                .get,
                "/api/documents/\(id)/pdf?source=true",
                headers: [.ifNoneMatch: etag]
            )
            #expect(notModified.status == .notModified)
            let unsatisfiable = try await client.request(
                .get,
                "/api/documents/\(id)/pdf?source=true",
                headers: [.range: "bytes=\(pdf.count + 10)-"]
            )
            #expect(unsatisfiable.status == .rangeNotSatisfiable)
            #expect(unsatisfiable.headers[.contentRange] == "bytes */\(pdf.count)")

            #expect(try await client.request(.get, "/api/documents/\(id)/layers/none/pdf?source=true").body == pdf)
            _ = try await client.json(.post, "/api/documents/\(id)/layers", ["name": "l1"])
            #expect(try await client.request(.get, "/api/documents/\(id)/layers/l1/pdf?source=true").body == pdf)

            // Without `source`, the PDF with the layer's records: here none, so an unchanged copy.
            let exported = try await client.request(.get, "/api/documents/\(id)/pdf")
            #expect(exported.status == .ok)
            #expect(exported.body.prefix(pdf.count) == pdf)

            // A PDF larger than one read of the blob store comes whole, and a range across reads too.
            let large = TestPDF.make(pageCount: 1, seed: 7, contentSize: 700_000)
            let largeID = try await client.upload(large)
            #expect(try await client.request(.get, "/api/documents/\(largeID)/pdf?source=true").body == large)
            let across = try await client.request(
                .get, "/api/documents/\(largeID)/pdf?source=true", headers: [.range: "bytes=200000-600000"])
            #expect(across.status == .partialContent)
            #expect(across.body == large[200_000...600_000])
        }
    }

    @Test func badUploadsStoreNothing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var harness = ServerHarness(directory: directory.url)
        harness.maxBodySize = 4096
        try await harness.run { client in
            let garbage = try await client.request(
                .post,
                "/api/documents",
                headers: [.contentType: "application/pdf"],
                body: Data("hello, not a pdf".utf8)
            )
            #expect(garbage.status == .unprocessableContent)
            #expect(garbage.reason?.contains("%PDF-") == true)

            let tooLarge = try await client.request(
                .post,
                "/api/documents",
                headers: [.contentType: "application/pdf"],
                body: Data(count: 10_000)
            )
            #expect(tooLarge.status == .contentTooLarge)

            let empty = try await client.request(
                .post, "/api/documents", headers: [.contentType: "application/pdf"], body: Data())
            #expect(empty.status == .badRequest)

            let noFile = try await client.request(
                .post,
                "/api/documents",
                headers: [.contentType: "multipart/form-data; boundary=b"],
                body: ServerHarness.Client.multipart(boundary: "b", parts: [("title", nil, nil, Data("x".utf8))])
            )
            #expect(noFile.status == .badRequest)

            let badID = try await client.request(
                .post,
                "/api/documents",
                headers: [.contentType: "multipart/form-data; boundary=b"],
                body: ServerHarness.Client.multipart(
                    boundary: "b",
                    parts: [
                        ("file", nil, nil, TestPDF.make(pageCount: 1)), ("document_id", nil, nil, Data("a/b".utf8)),
                    ]
                )
            )
            #expect(badID.status == .badRequest)

            let list = try await client.request(.get, "/api/documents")
            #expect(list.json?["document_count"]?.integerValue == 0)
        }
        let pdfs = try FileManager.default.contentsOfDirectory(
            atPath: directory.url.appendingPathComponent("pdfs").path)
        #expect(pdfs.isEmpty)
    }

    /// A path id that breaks the identifier rules names nothing that can exist: 404, as for an
    /// unknown id (the existing server's documented answer), with the rule it breaks.
    @Test(arguments: [
        ("/api/documents/a%2Fb/properties", "slash"),
        ("/api/documents/..%2Fetc/properties", "slash"),
        ("/api/documents/a..b/properties", "'..'"),
        ("/api/documents/x%00y/properties", "NUL"),
        ("/api/documents/\(String(repeating: "a", count: 300))/properties", "longer than 256 bytes"),
        ("/api/documents/unknown/properties", "No document has the id 'unknown'"),
        ("/api/documents/unknown/layers/l/annotations", "No document has the id 'unknown'"),
        ("/api/documents/unknown/layers/bad*name/annotations", "'*'"),
    ])
    func badIdentifiers(uri: String, reason: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let reply = try await client.request(.get, uri)
            #expect(reply.status == .notFound)
            #expect(reply.reason?.contains(reason) == true, "\(reply.reason ?? "")")
        }
    }

    @Test func dataSurvivesARestart() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let harness = ServerHarness(directory: directory.url)
        let pdf = TestPDF.make(pageCount: 2)
        let id = try await harness.run { client in
            let id = try await client.upload(pdf)
            let created = try await client.json(
                .post, "/api/documents/\(id)/annotations", ["content": noteContent(text: "kept")])
            #expect(created.status == .ok)
            return id
        }
        try await harness.run { client in
            let list = try await client.request(.get, "/api/documents/\(id)/annotations")
            let annotations = try #require(list.data?["annotations"]?.arrayValue)
            #expect(annotations.count == 1)
            #expect(annotations.first?["content"]?["text"]?["value"]?.stringValue == "kept")
            #expect(try await client.request(.get, "/api/documents/\(id)/pdf?source=true").body == pdf)
        }
    }

    @Test func uploadWithInstantJSONIsAllOrNothing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let pdf = TestPDF.make(pageCount: 1)
        try await ServerHarness(directory: directory.url).run { client in
            func upload(_ id: String, annotations: [JSONValue]) async throws -> ServerHarness.Client.Reply {
                let instantJSON: JSONValue = [
                    "format": "https://pspdfkit.com/instant-json/v1", "annotations": .array(annotations),
                ]
                return try await client.request(
                    .post,
                    "/api/documents",
                    headers: [.contentType: "multipart/form-data; boundary=zz"],
                    body: ServerHarness.Client.multipart(
                        boundary: "zz",
                        parts: [
                            ("file", "a.pdf", "application/pdf", pdf),
                            ("document_id", nil, nil, Data(id.utf8)),
                            ("instant.json", "instant.json", "application/json", instantJSON.encoded()),
                        ]
                    )
                )
            }
            let good = try await upload("with-json", annotations: [noteContent(id: "n1")])
            #expect(good.status == .ok)
            let annotations = try await client.request(.get, "/api/documents/with-json/annotations")
            #expect(annotations.data?["annotations"]?.arrayValue?.map { $0["id"]?.stringValue } == ["n1"])

            let bad = try await upload("bad-json", annotations: [noteContent(page: 3)])
            #expect(bad.status == .unprocessableContent)
            #expect(bad.reason?.hasPrefix("annotations[0].pageIndex") == true)
            #expect(try await client.request(.get, "/api/documents/bad-json").status == .notFound)
        }
    }
}
