import ArgumentParser
import Foundation
import InstantServer

/// The `instant serve` options of ``HTTPLimits``: timeouts, the request head size limit and the
/// connection limit. Each can also be set by its environment variable; a flag wins.
struct HTTPLimitOptions: ParsableArguments {
    @Option(
        help:
            "Seconds a request head may take to arrive from its first byte (on a new connection: from its start); slower clients get 408 (default 20). Env: HTTP_HEADER_TIMEOUT."
    )
    var headerTimeout: Double?

    @Option(
        help:
            "Seconds a request body (or an answer the client does not read) may make no progress before the connection is closed (default 60). Env: HTTP_BODY_TIMEOUT."
    )
    var bodyTimeout: Double?

    @Option(
        help:
            "Seconds a keep-alive connection may wait for its next request (default 60). Env: HTTP_IDLE_TIMEOUT."
    )
    var idleTimeout: Double?

    @Option(
        help:
            "The largest request head in bytes (request target and header fields); larger ones get 431 (default 32768). Env: MAX_HEADER_SIZE."
    )
    var maxHeaderSize: Int?

    @Option(
        help:
            "The most connections open at once, lowered to fit the descriptor limit (ulimit -n); at the limit the connection that waited longest for a request is closed (default 10000). Env: MAX_CONNECTIONS."
    )
    var maxConnections: Int?

    /// Refuses bad values when the command line is parsed, before the server starts.
    func validate() throws {
        _ = try limits(environment: ProcessInfo.processInfo.environment)
    }

    /// The limits the options and `environment` give, with the defaults for the rest.
    func limits(environment: [String: String]) throws -> HTTPLimits {
        var limits = HTTPLimits()
        let timeouts: [(WritableKeyPath<HTTPLimits, Duration>, Double?, String, String)] = [
            (\.headerTimeout, headerTimeout, "--header-timeout", "HTTP_HEADER_TIMEOUT"),
            (\.bodyTimeout, bodyTimeout, "--body-timeout", "HTTP_BODY_TIMEOUT"),
            (\.idleTimeout, idleTimeout, "--idle-timeout", "HTTP_IDLE_TIMEOUT"),
        ]
        for (field, flag, flagName, variable) in timeouts {
            if let value = try LimitOption.seconds(flag, flagName, variable, environment, in: 0.001...86_400) {
                limits[keyPath: field] = value
            }
        }
        let counts: [(WritableKeyPath<HTTPLimits, Int>, Int?, String, String)] = [
            (\.maxHeaderSize, maxHeaderSize, "--max-header-size", "MAX_HEADER_SIZE"),
            (\.maxConnections, maxConnections, "--max-connections", "MAX_CONNECTIONS"),
        ]
        for (field, flag, flagName, variable) in counts {
            if let value = try LimitOption.count(flag, flagName, variable, environment) {
                limits[keyPath: field] = value
            }
        }
        return limits
    }
}
