import Hummingbird
import Logging
import NIOCore

/// Turns every error thrown below it into the API's error shape, so that no client sees a
/// framework-specific body, and logs server-side failures.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            if error.status == .internalServerError {
                context.logger.error("Request failed", metadata: ["error": "\(error.reason)"])
            }
            return try error.response(from: request, context: context)
        } catch let error as StorageError {
            let apiError = APIError(error)
            if apiError.status.code >= 500 {
                context.logger.error("Storage failure", metadata: ["error": "\(error)"])
            }
            return try apiError.response(from: request, context: context)
        } catch is NIOTooManyBytesError {
            return try APIError(
                .contentTooLarge,
                "The request body is larger than the server's limit. Send a smaller body or raise --max-body-size."
            ).response(from: request, context: context)
        } catch let error as HTTPResponseError {
            let reason =
                (error as? HTTPError)?.body ?? "The request failed with status \(error.status.code)."
            return try APIError(error.status, reason).response(from: request, context: context)
        } catch {
            context.logger.error("Unexpected error", metadata: ["error": "\(error)"])
            return try APIError(.internalServerError, "The server failed to handle the request: \(error)")
                .response(from: request, context: context)
        }
    }
}
