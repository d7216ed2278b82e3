import Hummingbird
import Prometheus

/// Counts requests and records their durations in a Prometheus registry, labelled by method,
/// route template (not the raw path, to bound cardinality) and status.
struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let registry: PrometheusCollectorRegistry

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        RequestMetrics.record(
            in: registry, request.method, route: context.endpointPath ?? "unmatched", status: response.status,
            duration: ContinuousClock.now - start)
        return response
    }
}

/// The measures of every answer, whether the router or a connection (``SyncRouteHandler``) made it.
enum RequestMetrics {
    static let buckets: [Duration] = [
        .milliseconds(1), .milliseconds(5), .milliseconds(25), .milliseconds(100), .milliseconds(500), .seconds(2),
    ]

    /// Counts an answer and records its duration, labelled by method, route template and status
    /// (also for the answers a connection makes ahead of the router, ``SyncRouteHandler``).
    static func record(
        in registry: PrometheusCollectorRegistry, _ method: HTTPRequest.Method, route: String,
        status: HTTPResponse.Status, duration: Duration
    ) {
        let labels = [("method", method.rawValue), ("route", route)]
        registry.makeCounter(
            name: "instant_http_requests_total",
            labels: labels + [("status", String(status.code))]
        ).increment()
        registry.makeDurationHistogram(
            name: "instant_http_request_duration_seconds",
            labels: labels,
            buckets: Self.buckets
        ).record(duration)
    }
}
