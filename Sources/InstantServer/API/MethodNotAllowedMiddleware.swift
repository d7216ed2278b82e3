import HTTPTypes
import Hummingbird

/// Answers requests the router finds no route for better than its plain 404: a path that exists
/// for other methods gets `405 Method Not Allowed` with those methods in `Allow` (RFC 9110
/// §15.5.6), and a method no route of the server uses (`TRACE`, `CONNECT`, `PATCH`, …) gets
/// `501 Not Implemented` on any other path (§15.6.2). Other paths stay 404.
///
/// Hummingbird's router answers 404 whenever the path and the method do not both match, and its
/// route table is not public; the table is rebuilt here from `Router.routes`. Add this middleware
/// after every route: a router's middleware wraps the routes added after it and its 404 answer.
struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    /// A path pattern and the methods it has routes for.
    private struct Route {
        let path: RouterPath
        var methods: Set<HTTPRequest.Method>
    }

    private let routes: [Route]
    private let implementedMethods: Set<HTTPRequest.Method>

    /// A middleware for the routes of a router, as `Router.routes` lists them.
    init(routes: [Router<Context>.RouteDescription]) {
        var byPath: [String: Route] = [:]
        for route in routes {
            byPath[route.path.description, default: Route(path: route.path, methods: [])].methods.insert(route.method)
        }
        self.routes = byPath.keys.sorted().compactMap { byPath[$0] }
        // HEAD is part of HTTP itself (RFC 9110 §9.1): a path without routes is 404 for it, not 501.
        self.implementedMethods = Set(routes.map(\.method)).union([.head])
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let allowed = allowedMethods(path: request.uri.path)
            if !allowed.isEmpty, !allowed.contains(request.method) {
                let list = allowed.map(\.rawValue).sorted().joined(separator: ", ")
                throw APIError(
                    .methodNotAllowed,
                    "\(request.method.rawValue) is not allowed on \(request.uri.path); it allows \(list).",
                    headers: [.allow: list]
                )
            }
            if allowed.isEmpty, !implementedMethods.contains(request.method) {
                let list = implementedMethods.map(\.rawValue).sorted().joined(separator: ", ")
                throw APIError(
                    .notImplemented,
                    "The server does not implement \(request.method.rawValue); its routes use \(list)."
                )
            }
            throw error
        }
    }

    /// The methods of every route whose pattern matches `path`.
    private func allowedMethods(path: String) -> Set<HTTPRequest.Method> {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        return routes.filter { Self.matches($0.path, segments) }.reduce(into: []) { $0.formUnion($1.methods) }
    }

    /// Whether a route pattern matches the segments of a path, as the router matches them.
    private static func matches(_ pattern: RouterPath, _ segments: [Substring]) -> Bool {
        for (index, element) in pattern.components.enumerated() {
            if element == .recursiveWildcard { return true }
            guard index < segments.count, element ~= segments[index] else { return false }
        }
        return pattern.components.count == segments.count
    }
}
