import Hummingbird
import Prometheus
import Synchronization

/// Counts requests and records their durations in a Prometheus registry, labelled by method,
/// route template (not the raw path, to bound cardinality) and status.
struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: RequestMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        metrics.record(
            request.method, route: context.endpointPath ?? "unmatched", status: response.status,
            duration: ContinuousClock.now - start)
        return response
    }
}

/// The measures of every answer, whether the router or a connection (``SyncRouteHandler``) made it:
/// `instant_http_requests_total` (labelled by method, route template and status) and
/// `instant_http_request_duration_seconds` (by method and route template).
///
/// Each series is looked up in the registry once and then kept: the registry's lookup (labels
/// built and compared under its lock, for both series) took about 1% of a node's event loops on
/// 1-change pushes. Methods other than the standard ones are labelled `OTHER`, so that a client
/// cannot make a series per method it invents.
final class RequestMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    private let series = Mutex<[Key: Series]>([:])

    static let buckets: [Duration] = [
        .milliseconds(1), .milliseconds(5), .milliseconds(25), .milliseconds(100), .milliseconds(500), .seconds(2),
    ]

    private struct Key: Hashable {
        var method: String
        var route: String
        var status: Int
    }

    private struct Series {
        var answers: Counter
        var durations: DurationHistogram
    }

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    /// Counts an answer and records its duration.
    func record(_ method: HTTPRequest.Method, route: String, status: HTTPResponse.Status, duration: Duration) {
        let key = Key(method: Self.label(of: method), route: route, status: status.code)
        let series = series.withLock { known in
            if let series = known[key] { return series }
            let labels = [("method", key.method), ("route", route)]
            let series = Series(
                answers: registry.makeCounter(
                    name: "instant_http_requests_total", labels: labels + [("status", String(status.code))]),
                durations: registry.makeDurationHistogram(
                    name: "instant_http_request_duration_seconds", labels: labels, buckets: Self.buckets))
            known[key] = series
            return series
        }
        series.answers.increment()
        series.durations.record(duration)
    }

    /// The label of a method: its name when it is a standard one.
    private static func label(of method: HTTPRequest.Method) -> String {
        switch method {
        case .get, .head, .post, .put, .delete, .connect, .options, .trace, .patch: method.rawValue
        default: "OTHER"
        }
    }
}
