import Foundation
import Hummingbird
import InstantJSON
import InstantTesting
import Testing

@testable import InstantServer

/// An uploader cannot make the server serve a page of its origin: only images are shown inline,
/// every answer is `nosniff` and sandboxed by its `Content-Security-Policy` (issue 13, finding 7).
@Suite("Attachment serving", .timeLimit(.minutes(10)))
struct AttachmentServingTests {
    @Test func onlyImagesAreShownInlineAndNothingRunsOnTheServersOrigin() async throws {
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let token = try await fixture.token(id)
            let files: [(type: String, data: Data, inline: Bool)] = [
                ("text/html", Data("<script>alert(document.domain)</script>".utf8), false),
                ("image/svg+xml", Data("<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'/>".utf8), false),
                ("application/javascript", Data("alert(1)".utf8), false),
                ("application/pdf", TestPDF.make(pageCount: 1, seed: 7), false),
                ("image/png", Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3]), true),
                ("image/jpeg", Data([0xFF, 0xD8, 0xFF, 0xE0, 4, 5, 6]), true),
            ]
            for file in files {
                let sha = Attachment.key(for: file.data)
                let upload = try await client.request(
                    .put, "/i/d/\(id)/attachments/\(sha)",
                    headers: [.authorization: "Token token=\"\(token)\"", .contentType: file.type],
                    body: file.data, apiToken: nil)
                #expect(upload.status == .ok, "\(file.type): \(upload.reason ?? "")")

                for path in ["/i/d/\(id)/attachments/\(sha)?jwt=\(token)", "/api/documents/\(id)/attachments/\(sha)"] {
                    let apiToken = path.hasPrefix("/api") ? ServerHarness.apiToken : nil
                    let download = try await client.request(.get, path, apiToken: apiToken)
                    #expect(download.status == .ok)
                    #expect(download.body == file.data)
                    #expect(download.headers[.contentType] == file.type, "clients learn the type from the answer")
                    let disposition = download.headers[.contentDisposition] ?? ""
                    #expect(
                        file.inline ? disposition == "inline" : disposition == "attachment; filename=\"\(sha)\"",
                        "\(file.type) from \(path): \(disposition)")
                    #expect(download.headers[.xContentTypeOptions] == "nosniff")
                    #expect(download.headers[.contentSecurityPolicy] == "default-src 'none'; sandbox")
                }
            }
        }
    }

    @Test func uploadsMustDeclareAPlainMediaType() async throws {
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let token = try await fixture.token(id)
            let data = Data("bytes".utf8)
            let path = "/i/d/\(id)/attachments/\(Attachment.key(for: data))"
            let refused = [
                "html", "text/", "/html", "text/html/x", "text html", "téxt/html",
                "image/" + String(repeating: "p", count: 300), "text/plain; charset=é",
            ]
            for type in refused {
                for (route, auth) in [(path, token), ("/api/documents/\(id)/attachments", nil)] {
                    let reply = try await client.request(
                        route.hasPrefix("/api") ? .post : .put, route,
                        headers: auth.map { [.authorization: "Token token=\"\($0)\"", .contentType: type] }
                            ?? [.contentType: type],
                        body: data, apiToken: auth == nil ? ServerHarness.apiToken : nil)
                    #expect(reply.status == .badRequest, "\(type) on \(route)")
                    #expect(reply.reason?.contains("Content-Type") == true, "\(reply.reason ?? "")")
                }
            }
            let mixedCase = try await client.request(
                .put, path, headers: [.authorization: "Token token=\"\(token)\"", .contentType: "Image/PNG"],
                body: data, apiToken: nil)
            #expect(mixedCase.data?["contentType"] == "image/png", "media type names are stored lowercased")
            let download = try await client.request(
                .get, "/api/documents/\(id)/attachments/\(Attachment.key(for: data))")
            #expect(download.headers[.contentDisposition] == "inline")
        }
    }

    @Test func everyAnswerTellsBrowsersNotToSniffOrRun() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let answers: [ServerHarness.Client.Reply] = [
                try await client.request(.get, "/healthcheck"),
                try await client.request(.get, "/metrics"),
                try await client.request(.get, "/api/documents"),
                try await client.request(.get, "/api/documents/\(id)/pdf"),
                try await client.request(.get, "/api/documents/nope/annotations"),
                try await client.request(.get, "/nowhere"),
                try await client.request(.get, "/api/documents", apiToken: "wrong"),
                try await client.request(.trace, "/healthcheck"),
            ]
            for answer in answers {
                #expect(answer.headers[.xContentTypeOptions] == "nosniff", "\(answer.status)")
                #expect(answer.headers[.contentSecurityPolicy] == "default-src 'none'; sandbox", "\(answer.status)")
            }
        }
    }
}
