import Hummingbird
import HummingbirdCore

/// Requires a client token (JWT) for the route's document and layer on the client routes
/// (`/i/d/{documentID}[/l/{layerName}]/…`) and puts it in the request's context, where each
/// handler asks it for the permission it needs (``InstantRequestContext/clientToken(allowing:)``).
///
/// The token comes in `Authorization: Token token="<jwt>"` (or `Bearer <jwt>`) or, for clients
/// that cannot set headers (a browser's WebSocket), in `?jwt=`. A request without one is answered
/// 401; a token that does not verify, or is for another document or layer, 403; a server without
/// a configured public key, 500 with what to configure.
struct ClientTokenMiddleware: RouterMiddleware {
    typealias Context = InstantRequestContext
    /// Reads the route's document id and layer name.
    let api: InstantAPI
    let verifier: ClientTokenVerifier?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        var context = context
        context.clientToken = try await Self.token(
            of: request.head, documentID: try api.documentID(context), layer: try api.layerName(context),
            verifier: verifier)
        return try await next(request, context)
    }

    /// The request's verified client token for a document and layer (the listening WebSocket's
    /// upgrade, which comes before the router, asks this too).
    static func token(of head: HTTPRequest, documentID: String, layer: String, verifier: ClientTokenVerifier?)
        async throws(APIError) -> ClientToken
    {
        do {
            let (verifier, presented) = try presentedToken(in: head, verifier: verifier)
            return try scoped(await verifier.verify(presented), documentID: documentID, layer: layer)
        } catch let error as ClientTokenError {
            throw APIError(error)
        } catch {
            throw APIError(.internalServerError, "The client token could not be checked: \(error)")
        }
    }

    /// The client token of a request's head as ``token(of:documentID:layer:verifier:)``
    /// decides it, when it can without a wait: no token, or one this node verified before and
    /// whose revocation it knows (``ClientTokenVerifier/knownToken(_:now:)``); `nil` otherwise.
    static func knownToken(of head: HTTPRequest, documentID: String, layer: String, verifier: ClientTokenVerifier?)
        throws(APIError) -> ClientToken?
    {
        do throws(ClientTokenError) {
            let (verifier, presented) = try presentedToken(in: head, verifier: verifier)
            guard let token = try verifier.knownToken(presented) else { return nil }
            return try scoped(token, documentID: documentID, layer: layer)
        } catch {
            throw APIError(error)
        }
    }

    /// The token a request presents, in `Authorization` or `?jwt=`, and the verifier to check it.
    private static func presentedToken(in head: HTTPRequest, verifier: ClientTokenVerifier?) throws(ClientTokenError)
        -> (ClientTokenVerifier, String)
    {
        guard let verifier else {
            throw ClientTokenError(
                .invalidConfiguration,
                "The server has no JWT public key configured; start it with JWT_PUBLIC_KEY and JWT_ALGORITHM."
            )
        }
        let presented =
            head.headerFields.value(of: .authorization).flatMap(AuthorizationHeader.token(from:))
            ?? URI(head.path ?? "").queryParameters["jwt"].map(String.init)
        guard let presented, !presented.isEmpty else {
            throw ClientTokenError(
                .missing,
                "This route needs a JWT: send 'Authorization: Token token=\"<jwt>\"' or ?jwt=<jwt>."
            )
        }
        return (verifier, presented)
    }

    /// The token, when it is for the document and layer.
    private static func scoped(_ token: ClientToken, documentID: String, layer: String) throws(ClientTokenError)
        -> ClientToken
    {
        guard token.documentID == documentID else {
            throw ClientTokenError(
                .wrongDocument,
                "The token is for document '\(token.documentID)', not '\(documentID)'."
            )
        }
        guard token.layer == layer else {
            throw ClientTokenError(.wrongLayer, "The token is for layer '\(token.layer)', not '\(layer)'.")
        }
        return token
    }
}

extension InstantRequestContext {
    /// The route's client token (``ClientTokenMiddleware``), which must allow at least one of
    /// `permissions`; otherwise 403 naming them.
    func clientToken(allowing permissions: [String]) throws(APIError) -> ClientToken {
        guard let clientToken else {
            throw APIError(
                .internalServerError, "A client route was registered without the client token middleware.")
        }
        return try clientToken.requiring(anyOf: permissions)
    }
}

extension ClientToken {
    /// The token, when it allows at least one of `permissions`; otherwise 403 naming them.
    func requiring(anyOf permissions: [String]) throws(APIError) -> ClientToken {
        guard permissions.contains(where: allows) else {
            throw APIError(
                ClientTokenError(
                    .permissionDenied,
                    "The token lacks the permission \(permissions.map { "'\($0)'" }.joined(separator: " or "))."))
        }
        return self
    }
}

extension APIError {
    /// A refused client token: 401 when none was sent, 500 when the server cannot check tokens,
    /// 403 otherwise.
    init(_ error: ClientTokenError) {
        let status: HTTPResponse.Status =
            switch error.code {
            case .missing: .unauthorized
            case .invalidConfiguration: .internalServerError
            default: .forbidden
            }
        self.init(status, error.message)
    }
}
