import Hummingbird
import Prometheus

/// Counts requests and records their durations in a Prometheus registry, labelled by method,
/// route template (not the raw path, to bound cardinality) and status.
struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let registry: PrometheusCollectorRegistry

    static var buckets: [Duration] {
        [.milliseconds(1), .milliseconds(5), .milliseconds(25), .milliseconds(100), .milliseconds(500), .seconds(2)]
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        let route = context.endpointPath ?? "unmatched"
        let labels = [("method", request.method.rawValue), ("route", route)]
        registry.makeCounter(
            name: "instant_http_requests_total",
            labels: labels + [("status", String(response.status.code))]
        ).increment()
        registry.makeDurationHistogram(
            name: "instant_http_request_duration_seconds",
            labels: labels,
            buckets: Self.buckets
        ).record(ContinuousClock.now - start)
        return response
    }
}
