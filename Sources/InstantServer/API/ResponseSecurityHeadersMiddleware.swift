import HTTPTypes
import Hummingbird

/// The headers that keep browsers from running what the server returns:
/// `X-Content-Type-Options: nosniff` (a browser takes each answer for the type it declares and
/// never guesses script or HTML from its bytes) and a `Content-Security-Policy` that allows
/// nothing (no scripts, styles, images or frames are loaded for an answer a browser shows) and
/// sandboxes the answer in an origin of its own. The API answers JSON and files, never pages, so
/// none of its answers needs more: attachments and PDFs a browser opens are shown (images) or
/// downloaded, but never run on the server's origin. Only the web viewer's pages and files choose
/// a policy of their own (``ViewerSecurity``), which the middleware keeps.
enum ResponseSecurityHeaders {
    /// The `Content-Security-Policy` of every answer.
    static let contentSecurityPolicy = "default-src 'none'; sandbox"

    /// The headers, as every answer carries them.
    static let fields: HTTPFields = [
        .xContentTypeOptions: "nosniff",
        .contentSecurityPolicy: contentSecurityPolicy,
    ]

    /// Puts the headers in an answer's `headers` that has not set them itself.
    static func add(to headers: inout HTTPFields) {
        for field in fields where headers[field.name] == nil {
            headers[field.name] = field.value
        }
    }
}

/// Puts ``ResponseSecurityHeaders`` on every answer of the router that has not set these headers
/// itself (the viewer's pages set their own `Content-Security-Policy`).
struct ResponseSecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        var response = try await next(request, context)
        ResponseSecurityHeaders.add(to: &response.headers)
        return response
    }
}
