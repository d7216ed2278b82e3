import HTTPTypes
import Hummingbird
import Logging

/// Gives each request an id (the caller's `X-Request-Id` if it sent a sensible one), puts it in
/// the logger's metadata (`request.id`) and the response's `X-Request-Id`, and logs the request
/// with its status and duration.
struct RequestLoggingMiddleware<Context: RequestContext>: RouterMiddleware {
    static var headerName: HTTPField.Name { HTTPField.Name("X-Request-Id")! }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let start = ContinuousClock.now
        var context = context
        let given: String? = request.headers[Self.headerName].flatMap { id in
            let usable = (1...128).contains(id.count) && id.allSatisfy { $0.isASCII && !$0.isWhitespace && $0 != "\"" }
            return usable ? id : nil
        }
        let id = given ?? context.logger[metadataKey: "hb.request.id"].map { "\($0)" } ?? ""
        context.logger[metadataKey: "request.id"] = "\(id)"
        var response = try await next(request, context)
        response.headers[Self.headerName] = id
        let elapsed = ContinuousClock.now - start
        context.logger.info(
            "\(request.method) \(request.uri.path)",
            metadata: [
                "status": "\(response.status.code)",
                "duration_ms":
                    "\(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)",
            ]
        )
        return response
    }
}
