import Hummingbird
import Logging

/// Turns every error thrown below it into the API's error shape, so that no client sees a
/// framework-specific body, and logs server-side failures.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        do {
            return try await next(request, context)
        } catch {
            let apiError = APIError(answering: error)
            if apiError.status.code >= 500 {
                context.logger.error("Request failed", metadata: ["error": "\(error)"])
            }
            return try apiError.response(from: request, context: context)
        }
    }
}
