import HTTPTypes
import Hummingbird
import Logging

/// Gives each request an id (the caller's `X-Request-Id` if it sent a sensible one), puts it in
/// the logger's metadata (`request.id`) and the response's `X-Request-Id`, and logs the request
/// with its status and duration.
struct RequestLoggingMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let start = ContinuousClock.now
        var context = context
        let id =
            RequestLog.usableID(request.headers) ?? context.logger[metadataKey: "hb.request.id"].map { "\($0)" } ?? ""
        context.logger[metadataKey: "request.id"] = "\(id)"
        var response = try await next(request, context)
        response.headers[RequestLog.headerName] = id
        RequestLog.answered(
            request.method, request.uri.path, status: response.status, since: start, logger: context.logger)
        return response
    }
}

/// The request id and log line of every answer, whether the router or a connection
/// (``SyncRouteHandler``) answered it.
enum RequestLog {
    static let headerName = HTTPField.Name("X-Request-Id")!

    /// The caller's `X-Request-Id`, if it is a sensible one (1 to 128 printable ASCII characters).
    static func usableID(_ headers: HTTPFields) -> String? {
        headers.value(of: headerName).flatMap { id in
            let usable = (1...128).contains(id.count) && id.allSatisfy { $0.isASCII && !$0.isWhitespace && $0 != "\"" }
            return usable ? id : nil
        }
    }

    /// Logs an answer with its status and how long it took.
    static func answered(
        _ method: HTTPRequest.Method, _ path: String, status: HTTPResponse.Status, since start: ContinuousClock.Instant,
        logger: Logger
    ) {
        let elapsed = ContinuousClock.now - start
        logger.info(
            "\(method) \(path)",
            metadata: [
                "status": "\(status.code)",
                "duration_ms":
                    "\(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)",
            ]
        )
    }
}
