import Foundation
import HTTPTypes
import Hummingbird
import InstantJSON
import NIOCore

/// The `Content-Security-Policy` of the viewer's pages and files: scripts, styles, images, the
/// pdf.js worker and requests only from the server itself (and `blob:` images, which the viewer
/// makes of image attachments it fetched); no inline script or style, no plugins, no `<base>`,
/// no form posts. The JSON answers of every other route keep ``ResponseSecurityHeaders``'s policy,
/// which allows nothing.
enum ViewerSecurity {
    /// The policy of the viewer (`/viewer` and its files), which any app may embed in a frame.
    static let viewerPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; "
        + "worker-src 'self'; base-uri 'none'; form-action 'none'"
    /// The policy of the start page at `/`, which embeds the viewer and which no other site may frame.
    static let startPagePolicy = viewerPolicy + "; frame-src 'self'; frame-ancestors 'none'"
    /// The header the development API needs: a site elsewhere cannot send it without the browser
    /// asking the server first (a CORS preflight, which this server never allows), so it cannot
    /// make a developer's browser upload documents or mint tokens.
    static let developmentRequestHeader = HTTPField.Name("X-OpenInstant-Start-Page")!
    /// `Referrer-Policy`: the viewer's pages send no `Referer` to other sites.
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
    /// `Service-Worker-Allowed`: the scope the viewer's service worker may take.
    static let serviceWorkerAllowed = HTTPField.Name("Service-Worker-Allowed")!
}

/// The routes of the web viewer (docs/VIEWER.md): `/` (the development start page, or how to
/// embed the viewer), `/viewer` and its files, pdf.js under `/viewer/pdfjs/`, and, only when the
/// server runs with its development credentials, the start page's API under `/dev/api/`.
struct ViewerRoutes: Sendable {
    let api: InstantAPI
    let assets: ViewerAssets
    let pdfjs: PDFJSFiles
    /// Signs the start page's tokens; `nil` unless the development start page is on.
    let issuer: ClientTokenIssuer?
    let tokenLifetime: Duration

    /// Loads the viewer's files and, for the development start page, the signing key.
    /// - Throws: ``ClientTokenError`` when the development key cannot sign.
    init(api: InstantAPI, configuration: ViewerConfiguration) async throws {
        self.api = api
        assets = ViewerAssets.load()
        pdfjs = PDFJSFiles(directory: configuration.pdfjsDirectory)
        if let development = configuration.development {
            issuer = try await ClientTokenIssuer(
                privateKeyPEM: development.keyPair.privateKeyPEM, algorithm: development.keyPair.algorithm)
            tokenLifetime = development.tokenLifetime
        } else {
            issuer = nil
            tokenLifetime = .zero
        }
    }

    /// Adds the routes to the server's router.
    func register(on router: Router<InstantRequestContext>) {
        router.get("/") { request, _ in
            try asset(self.issuer == nil ? "embedding.html" : "start.html", request: request, framed: false)
        }
        router.get("viewer") { request, _ in try asset("viewer.html", request: request, framed: true) }
        router.get("viewer/{file}") { request, context in
            guard let name = context.parameters.get("file"), ViewerAssets.isAssetName(name) else {
                throw APIError.notFound("The viewer has no file of that name.")
            }
            return try asset(name, request: request, framed: true)
        }
        // pdf.js's files are one or two folders deep (build/pdf.js, web/standard_fonts/FoxitSans.pfb).
        for path in ["viewer/pdfjs/{folder}/{name}", "viewer/pdfjs/{folder}/{name}/{file}"] {
            router.get(RouterPath(path)) { request, context in
                let segments = ["folder", "name", "file"].compactMap { context.parameters.get($0) }
                let response = try await pdfjs.response(
                    path: segments.map { Substring($0) }, request: request, context: context)
                return Self.withViewerHeaders(response, policy: ViewerSecurity.viewerPolicy)
            }
        }
        guard let issuer else { return }
        let development = router.group("dev/api").add(middleware: DevelopmentRequestMiddleware())
        development.get("documents", use: api.listDocuments)
        development.post("documents", use: api.createDocument)
        development.get("documents/{documentID}/layers", use: api.listLayers)
        development.post("token") { request, _ in try await mintToken(request, issuer: issuer) }
    }

    /// A file of the viewer, or `503` saying where its files were looked for.
    func asset(_ name: String, request: Request, framed: Bool) throws -> Response {
        guard !assets.files.isEmpty else {
            throw APIError(
                .serviceUnavailable,
                "The web viewer's files were not found (looked in \(assets.searched.joined(separator: ", "))). "
                    + "Keep the \(ViewerAssets.bundleName).resources directory of the build next to the instant executable."
            )
        }
        guard let file = assets.files[name] else { throw APIError.notFound("The viewer has no file '\(name)'.") }
        let policy = framed ? ViewerSecurity.viewerPolicy : ViewerSecurity.startPagePolicy
        if let match = request.headers[.ifNoneMatch],
            match.split(separator: ",").contains(where: {
                $0.trimmingCharacters(in: .whitespaces) == file.etag
            })
        {
            return Self.withViewerHeaders(
                Response(status: .notModified, headers: [.eTag: file.etag, .cacheControl: "no-cache"]), policy: policy)
        }
        var headers: HTTPFields = [.contentType: file.contentType, .eTag: file.etag, .cacheControl: "no-cache"]
        // Apps on other origins load embed.js (and may load the client module) as module scripts,
        // which browsers fetch with CORS; the files are public and the same for everyone.
        headers[.accessControlAllowOrigin] = "*"
        if name == "service-worker.js" {
            // The worker keeps `/viewer` itself too, one level above its own path.
            headers[ViewerSecurity.serviceWorkerAllowed] = "/viewer"
        }
        return Self.withViewerHeaders(
            Response(status: .ok, headers: headers, body: .init(byteBuffer: file.body)), policy: policy)
    }

    /// The headers of every page and file of the viewer: its policy, and no `Referer` to other sites.
    static func withViewerHeaders(_ response: Response, policy: String) -> Response {
        var response = response
        response.headers[.contentSecurityPolicy] = policy
        response.headers[ViewerSecurity.referrerPolicy] = "no-referrer"
        return response
    }

    /// `POST /dev/api/token` with `{"document_id", "layer"?, "user_id"?, "creator_name"?,
    /// "permissions"?}`: a client token for an existing document, signed with the development key,
    /// with a random `jti` (so that it can be revoked) and ``tokenLifetime``.
    func mintToken(_ request: Request, issuer: ClientTokenIssuer) async throws -> Response {
        // The development API stands in for the backend API, and has its body limit.
        let body = try await api.jsonBody(request)
        guard let documentID = body["document_id"]?.stringValue else {
            throw APIError.badRequest("document_id: expected the id of the document to open, a string.")
        }
        try Identifiers.validate(documentID, what: "document id")
        _ = try await api.requireDocument(documentID)
        let layer = try optionalString(body, "layer") ?? ""
        if !layer.isEmpty { try Identifiers.validateLayerName(layer) }
        let user = try optionalString(body, "user_id")
        if let user { try Identifiers.validate(user, what: "user id") }
        let creatorName = try optionalString(body, "creator_name")
        if let creatorName, creatorName.utf8.count > Identifiers.maximumLength {
            throw APIError.badRequest("creator_name: longer than \(Identifiers.maximumLength) bytes.")
        }
        let known = ["read-document", "write", "download"]
        var permissions = known
        if let list = body["permissions"] {
            guard let values = list.arrayValue?.compactMap(\.stringValue), values.count == list.arrayValue?.count,
                values.allSatisfy(known.contains)
            else {
                throw APIError.badRequest("permissions: expected an array of read-document, write and download.")
            }
            permissions = values
        }
        let expiration = Date().addingTimeInterval(Double(tokenLifetime.components.seconds))
        let jwt = try await issuer.sign(
            ClientClaims(
                documentID: documentID, layer: layer.isEmpty ? nil : layer, permissions: permissions, userID: user,
                creatorName: creatorName ?? user, expiration: expiration, tokenID: api.identifiers.next().string))
        return InstantAPI.data([
            "jwt": .string(jwt), "expires_at": .integer(Int64(expiration.timeIntervalSince1970.rounded(.down))),
        ])
    }

    /// A string member that may be absent or `null`; `400` naming it when it is another type.
    private func optionalString(_ body: JSONValue, _ name: String) throws(APIError) -> String? {
        guard let value = body[name], value != .null else { return nil }
        guard let text = value.stringValue else { throw .badRequest("\(name): expected a string.") }
        return text.isEmpty ? nil : text
    }
}

/// Refuses requests of the development API without ``ViewerSecurity/developmentRequestHeader``.
struct DevelopmentRequestMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard request.headers[ViewerSecurity.developmentRequestHeader] != nil else {
            throw APIError.forbidden(
                "The development API answers only the start page: send the header "
                    + "'\(ViewerSecurity.developmentRequestHeader.rawName): 1', as the page does.")
        }
        return try await next(request, context)
    }
}
