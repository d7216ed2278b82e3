import Foundation

/// An error reported by the Instant client SDK.
///
/// Match on ``code`` to react to a kind of failure; ``message`` explains what went wrong and
/// what to do about it, in words meant for a developer's log.
public struct InstantError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The kind of failure. New codes may be added in future versions, so `switch` statements
    /// over codes need a `default` branch.
    public var code: Code
    /// What went wrong and what to do about it.
    public var message: String

    /// Creates an error with the given code and explanation.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "InstantError.\(code.rawValue): \(message)" }

    public var errorDescription: String? { message }
}

extension InstantError {
    /// Whether the failed operation may succeed if simply tried again later: the network or the
    /// server was unavailable. Authentication failures and rejections are not retryable.
    public var isRetryable: Bool {
        code == .couldNotReachServer || code == .serverUnavailable
    }
}

extension InstantError {
    /// The error for a status the server refused a request with (over HTTP, or in the `error` of
    /// an answer on the listening WebSocket), with the server's reason.
    init(status: Int, reason: String) {
        switch status {
        case 401, 403: self.init(.authenticationFailed, "The server refused the JWT: \(reason)")
        case 404: self.init(.documentNotFound, "The server does not have it: \(reason)")
        case 500...: self.init(.serverUnavailable, "The server failed (\(status)): \(reason)")
        default: self.init(.invalidServerResponse, "The server refused the request (\(status)): \(reason)")
        }
    }
}
