/// How long a client may take to send a request, how large a request head may be, and how many
/// connections the server keeps open at once.
///
/// The timeouts apply while the server waits for the client, never while it answers: a long-poll
/// on `.../listen` waits for changes as long as ``InstantServerConfiguration/longPollTimeout``, an
/// export takes as long as it takes, and a connection upgraded to a WebSocket is kept alive by its
/// pings (``InstantServerConfiguration/webSocketPingInterval``) instead.
public struct HTTPLimits: Sendable, Equatable {
    /// How long a request head (request line and header fields) may take to arrive, from its first
    /// byte (on a new connection: from the connection's start); a slower client gets
    /// `408 Request Timeout` and the connection is closed. A new connection that sends nothing in
    /// that time is closed without an answer.
    public var headerTimeout: Duration
    /// How long a request body (or a response body the client does not read) may make no progress
    /// while the server waits for it; then the client gets `408 Request Timeout` if its answer has
    /// not started, and the connection is closed. A body that keeps moving may take any time.
    public var bodyTimeout: Duration
    /// How long a keep-alive connection may wait for its next request after an answer; then it is
    /// closed without an answer, as HTTP allows.
    public var idleTimeout: Duration
    /// The largest request head in bytes (request target and header fields); a larger one gets
    /// `431 Request Header Fields Too Large` and the connection is closed.
    public var maxHeaderSize: Int
    /// The most connections open at once. The server serves fewer when the process's descriptor
    /// limit (`ulimit -n`) would not leave room for its files (see
    /// ``effectiveMaxConnections(descriptorLimit:)``). When the limit is reached, a new
    /// connection closes the connection that has waited longest for a request; connections
    /// that are being answered (long-polls, uploads, exports, WebSockets) are never closed for
    /// it, and when all are, the new connection is refused.
    public var maxConnections: Int

    /// Creates HTTP limits; every default suits a server facing the internet.
    public init(
        headerTimeout: Duration = .seconds(20),
        bodyTimeout: Duration = .seconds(60),
        idleTimeout: Duration = .seconds(60),
        maxHeaderSize: Int = 32 * 1024,
        maxConnections: Int = 10_000
    ) {
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.idleTimeout = idleTimeout
        self.maxHeaderSize = maxHeaderSize
        self.maxConnections = maxConnections
    }

    /// Descriptors kept free for everything but connections (the database and its journal, PDFs,
    /// the listening socket, the event loops): 128, or a quarter of the limit when that is less.
    public static func reservedDescriptors(descriptorLimit: Int) -> Int {
        min(128, descriptorLimit / 4)
    }

    /// ``maxConnections``, lowered so that open connections leave
    /// ``reservedDescriptors(descriptorLimit:)`` of the process's descriptors free.
    /// - Parameter descriptorLimit: The process's soft `RLIMIT_NOFILE`, `nil` when unlimited.
    public func effectiveMaxConnections(descriptorLimit: Int?) -> Int {
        guard let descriptorLimit else { return maxConnections }
        let available = descriptorLimit - Self.reservedDescriptors(descriptorLimit: descriptorLimit)
        return max(1, min(maxConnections, available))
    }
}
