import Hummingbird
import Logging

/// Logs each request with its status and duration; the logger carries the request id (`hb.request.id`).
struct RequestLoggingMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let start = ContinuousClock.now
        let response = try await next(request, context)
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
