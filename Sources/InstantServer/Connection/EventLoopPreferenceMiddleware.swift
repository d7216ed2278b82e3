import Hummingbird

/// Runs each request's handler with its connection's event loop as the preferred task executor.
struct EventLoopPreferenceMiddleware: RouterMiddleware {
    func handle(
        _ request: Request, context: InstantRequestContext,
        next: (Request, InstantRequestContext) async throws -> Response
    ) async throws -> Response {
        try await withTaskExecutorPreference(context.executor) { try await next(request, context) }
    }
}
