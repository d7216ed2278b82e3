import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InstantJSON
import InstantTesting
import Testing

@testable import InstantServer

/// The web viewer's routes (issue 16): its pages and files with their own security policy, pdf.js
/// from a directory, the development start page and its API only with development credentials.
@Suite("Viewer routes", .timeLimit(.minutes(10)))
struct ViewerRoutesTests {
    /// A server with a JWT key; the development start page when `development` is set.
    static func run(
        pdfjsDirectory: String = ViewerConfiguration.debianPDFJSDirectory, development: Bool = false,
        _ body: @Sendable (ServerHarness.Client, DevelopmentKeyPair) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let keyPair = DevelopmentKeyPair()
        var configuration = InstantServerConfiguration(
            hostname: "127.0.0.1", port: 0, apiAuthToken: ServerHarness.apiToken,
            jwt: JWTConfiguration(publicKeyPEM: keyPair.publicKeyPEM, algorithm: .es256))
        configuration.viewer = ViewerConfiguration(
            pdfjsDirectory: pdfjsDirectory, development: development ? DevelopmentViewer(keyPair: keyPair) : nil)
        let app = try await buildInstantApplication(
            configuration: configuration, storage: try InstantStorage.sqlite(directory: directory.url),
            importer: InstantPDFImporter())
        try await app.test(.router) { client in try await body(ServerHarness.Client(client: client), keyPair) }
    }

    static let strictPolicy = "default-src 'none'; sandbox"

    @Test func theViewerPageAndItsFilesCarryTheViewersPolicyAndTheAPIKeepsItsOwn() async throws {
        try await Self.run { client, _ in
            let page = try await client.request(.get, "/viewer", apiToken: nil)
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            let policy = try #require(page.headers[.contentSecurityPolicy])
            #expect(policy == ViewerSecurity.viewerPolicy)
            #expect(policy.contains("script-src 'self'"))
            #expect(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval") && !policy.contains("sandbox"))
            #expect(page.headers[.xContentTypeOptions] == "nosniff")
            #expect(page.headers[ViewerSecurity.referrerPolicy] == "no-referrer")
            #expect(String(decoding: page.body, as: UTF8.self).contains("/viewer/viewer.js"))

            let script = try await client.request(.get, "/viewer/instant-client.js", apiToken: nil)
            #expect(script.status == .ok)
            #expect(script.headers[.contentType] == "text/javascript; charset=utf-8")
            #expect(script.headers[.accessControlAllowOrigin] == "*")
            let etag = try #require(script.headers[.eTag])
            let again = try await client.request(
                .get, "/viewer/instant-client.js", headers: [.ifNoneMatch: etag], apiToken: nil)
            #expect(again.status == .notModified)
            #expect(again.body.isEmpty)

            let worker = try await client.request(.get, "/viewer/service-worker.js", apiToken: nil)
            #expect(worker.headers[ViewerSecurity.serviceWorkerAllowed] == "/viewer")

            for path in ["/viewer/nothing.js", "/viewer/VIEWER.JS", "/viewer/viewer.js.map", "/viewer/..%2Fsecret.js"] {
                let missing = try await client.request(.get, path, apiToken: nil)
                #expect(missing.status == .notFound, "\(path)")
                #expect(missing.headers[.contentSecurityPolicy] == Self.strictPolicy, "\(path)")
            }
            let api = try await client.request(.get, "/api/documents")
            #expect(api.headers[.contentSecurityPolicy] == Self.strictPolicy)
        }
    }

    @Test func withoutDevelopmentCredentialsTheRootSaysHowToEmbedAndTheDevelopmentAPIIsAbsent() async throws {
        try await Self.run { client, _ in
            let root = try await client.request(.get, "/", apiToken: nil)
            #expect(root.status == .ok)
            let text = String(decoding: root.body, as: UTF8.self)
            #expect(text.contains("embedViewer"))
            #expect(!text.contains("start.js"))
            #expect(root.headers[.contentSecurityPolicy] == ViewerSecurity.startPagePolicy)
            #expect(root.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)
            for (method, path) in [(HTTPRequest.Method.get, "/dev/api/documents"), (.post, "/dev/api/token")] {
                let reply = try await client.request(
                    method, path, headers: [ViewerSecurity.developmentRequestHeader: "1"], apiToken: nil)
                #expect(reply.status == .notFound || reply.status == .methodNotAllowed, "\(path): \(reply.status)")
            }
        }
    }

    @Test func theDevelopmentStartPageListsUploadsAndMintsTokensTheServerAccepts() async throws {
        try await Self.run(development: true) { client, _ in
            let root = try await client.request(.get, "/", apiToken: nil)
            #expect(String(decoding: root.body, as: UTF8.self).contains("/viewer/start.js"))
            let header: HTTPFields = [ViewerSecurity.developmentRequestHeader: "1"]

            // Without the page's header (what a form on another site would send), nothing happens.
            let forged = try await client.request(
                .post, "/dev/api/documents", headers: [.contentType: "application/pdf"],
                body: TestPDF.make(pageCount: 1), apiToken: nil)
            #expect(forged.status == .forbidden)
            #expect(forged.reason?.contains("X-OpenInstant-Start-Page") == true)

            var uploadHeaders = header
            uploadHeaders[.contentType] = "application/pdf"
            let upload = try await client.request(
                .post, "/dev/api/documents", headers: uploadHeaders, body: TestPDF.make(pageCount: 2), apiToken: nil)
            #expect(upload.status == .ok)
            let documentID = try #require(upload.data?["document_id"]?.stringValue)
            let list = try await client.request(.get, "/dev/api/documents", headers: header, apiToken: nil)
            #expect(list.data?.arrayValue?.compactMap { $0["id"]?.stringValue } == [documentID])

            var jsonHeaders = header
            jsonHeaders[.contentType] = "application/json"
            let minted = try await client.request(
                .post, "/dev/api/token", headers: jsonHeaders,
                body: JSONValue.object([
                    "document_id": .string(documentID), "layer": "review", "user_id": "alice",
                ]).encoded(), apiToken: nil)
            #expect(minted.status == .ok, "\(minted.reason ?? "")")
            let jwt = try #require(minted.data?["jwt"]?.stringValue)
            let snapshot = try await client.request(
                .get, "/i/d/\(documentID)/l/review/snapshot", headers: [.authorization: "Token token=\"\(jwt)\""],
                apiToken: nil)
            #expect(snapshot.status == .ok)
            let claims = try #require(
                ClientTokenVerifier.base64URLDecode(jwt.split(separator: ".")[1]).flatMap { try? JSONValue.parse($0) })
            #expect(claims["user_id"] == "alice")
            #expect(claims["layer"] == "review")
            #expect(claims["jti"]?.stringValue?.isEmpty == false)
            #expect(claims["permissions"] == ["read-document", "write", "download"])

            for (body, fragment) in [
                (JSONValue.object([:]), "document_id"),
                (["document_id": "missing"], "missing"),
                (["document_id": .string(documentID), "layer": "a/b"], "slash"),
                (["document_id": .string(documentID), "user_id": 7], "user_id"),
                (["document_id": .string(documentID), "permissions": ["admin"]], "permissions"),
            ] {
                let refused = try await client.request(
                    .post, "/dev/api/token", headers: jsonHeaders, body: body.encoded(), apiToken: nil)
                #expect(refused.status == .badRequest || refused.status == .notFound, "\(body)")
                #expect(refused.reason?.contains(fragment) == true, "\(refused.reason ?? "")")
            }
        }
    }

    @Test func pdfjsIsServedFromItsDirectoryOnlyByPlainNamesWithKnownExtensions() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let build = directory.url.appendingPathComponent("pdfjs/build")
        try FileManager.default.createDirectory(at: build, withIntermediateDirectories: true)
        try Data("window.pdfjsLib = {};".utf8).write(to: build.appendingPathComponent("pdf.js"))
        try Data("secret".utf8).write(to: directory.url.appendingPathComponent("secret.js"))
        try Data("#!/bin/sh".utf8).write(to: build.appendingPathComponent("run.sh"))
        try await Self.run(pdfjsDirectory: directory.url.appendingPathComponent("pdfjs").path) { client, _ in
            let script = try await client.request(.get, "/viewer/pdfjs/build/pdf.js", apiToken: nil)
            #expect(script.status == .ok)
            #expect(String(decoding: script.body, as: UTF8.self) == "window.pdfjsLib = {};")
            #expect(script.headers[.contentType] == "text/javascript; charset=utf-8")
            #expect(script.headers[.contentSecurityPolicy] == ViewerSecurity.viewerPolicy)
            let etag = try #require(script.headers[.eTag])
            let again = try await client.request(
                .get, "/viewer/pdfjs/build/pdf.js", headers: [.ifNoneMatch: etag], apiToken: nil)
            #expect(again.status == .notModified)
            for path in [
                "/viewer/pdfjs/../secret.js", "/viewer/pdfjs/build/..%2F..%2Fsecret.js", "/viewer/pdfjs/build/run.sh",
                "/viewer/pdfjs/build/.hidden.js", "/viewer/pdfjs/build", "/viewer/pdfjs/build/missing.js",
            ] {
                let refused = try await client.request(.get, path, apiToken: nil)
                #expect(refused.status == .notFound, "\(path): \(refused.status)")
                #expect(!String(decoding: refused.body, as: UTF8.self).contains("secret"), "\(path)")
            }
        }
        try await Self.run(pdfjsDirectory: directory.url.appendingPathComponent("absent").path) { client, _ in
            let missing = try await client.request(.get, "/viewer/pdfjs/build/pdf.js", apiToken: nil)
            #expect(missing.status == .notFound)
            #expect(missing.reason?.contains("libjs-pdf") == true)
            #expect(missing.reason?.contains("--pdfjs-dir") == true)
        }
    }

    @Test func everyShippedFileHasANameTheRoutesServe() {
        let assets = ViewerAssets.load()
        #expect(assets.searched.isEmpty, "looked in \(assets.searched)")
        let names = Set(assets.files.keys)
        for name in [
            "viewer.html", "viewer.js", "viewer.css", "instant-client.js", "client-store.js", "pdf-pages.js",
            "annotation-drawing.js", "tools.js", "comments.js", "pdf-cache.js", "embed.js", "service-worker.js",
            "boot.js",
            "start.html", "start.js", "start.css", "embedding.html",
        ] {
            #expect(names.contains(name), "\(name)")
        }
        #expect(!ViewerAssets.isAssetName("../viewer.js"))
        #expect(!ViewerAssets.isAssetName("viewer.js.map"))
        #expect(!ViewerAssets.isAssetName(".js"))
    }
}
