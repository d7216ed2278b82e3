import NIOCore

/// Where one connection is in its cycle of requests and answers, and so which of the
/// ``HTTPLimits`` timeouts runs for it and when it ends.
///
/// - Waiting for a request: the head must arrive within the header timeout of its first byte (of
///   the connection's start for the first request); before that first byte, a connection that
///   has answered a request may wait for the idle timeout.
/// - Reading a request body: the body timeout runs whenever the server asks for bytes that do
///   not come. While the server does not read (its buffers are full), nothing runs.
/// - Answering: nothing runs; long-polls, exports and slow handlers take their time.
/// - An answer the client does not take (the socket stays unwritable) ends after the body
///   timeout, in every phase.
/// - After the first request was handed to the WebSocket upgrade decision and no HTTP tracking
///   began, the connection is a WebSocket (or about to be answered and closed): only the rule
///   above runs; WebSocket pings keep the rest in check.
struct ConnectionTimeline {
    /// Why a connection's time ran out.
    enum Expiry: Equatable {
        /// The request head did not arrive within the header timeout.
        case headTooSlow
        /// The request body made no progress for the body timeout.
        case bodyStalled
        /// The client took no answer bytes for the body timeout.
        case answerStalled
        /// The connection waited for its next request for the idle timeout.
        case idle
    }

    private let headerTimeout: TimeAmount
    private let bodyTimeout: TimeAmount
    private let idleTimeout: TimeAmount

    /// When the pending request head began: its first byte, or the connection's start for the
    /// first request; `nil` when no head is pending.
    private var headStarted: NIODeadline?
    /// When the connection last finished answering, `nil` while it is not idle.
    private var idleSince: NIODeadline?
    /// When the server asked for bytes that have not come since; `nil` while it is not reading.
    private var awaitingBytesSince: NIODeadline?
    /// When the socket became unwritable, `nil` while it is writable.
    private var unwritableSince: NIODeadline?

    /// Bytes of a request head arrived and the head is not complete.
    private(set) var hasPartialHead = false
    /// A request head arrived and its end has not.
    private(set) var isReadingBody = false
    /// Requests whose head arrived and whose answer has not ended.
    private(set) var unansweredRequests = 0
    /// The answer to the oldest unanswered request has begun.
    private(set) var isAnswering = false
    /// The first request went to the WebSocket upgrade decision and HTTP tracking has not begun.
    private(set) var isUntracked = false

    /// A timeline for a connection that opened at `openedAt`.
    init(limits: HTTPLimits, openedAt: NIODeadline) {
        headerTimeout = TimeAmount(limits.headerTimeout)
        bodyTimeout = TimeAmount(limits.bodyTimeout)
        idleTimeout = TimeAmount(limits.idleTimeout)
        headStarted = openedAt
    }

    /// Whether the connection is free to be closed for a newer one: it is neither answering a
    /// request nor a WebSocket (it may still be receiving a request head, or a body that was
    /// answered early).
    var isWaitingForRequest: Bool { !isUntracked && unansweredRequests == 0 }

    /// Bytes arrived from the client.
    mutating func bytesReceived(at now: NIODeadline) {
        awaitingBytesSince = nil
        guard !isUntracked, !isReadingBody else { return }
        hasPartialHead = true
        if headStarted == nil {
            headStarted = now
            idleSince = nil
        }
    }

    /// The server asked the socket for more bytes.
    mutating func readRequested(at now: NIODeadline) {
        if awaitingBytesSince == nil { awaitingBytesSince = now }
    }

    /// The socket became writable or unwritable.
    mutating func writabilityChanged(isWritable: Bool, at now: NIODeadline) {
        if isWritable {
            unwritableSince = nil
        } else if unwritableSince == nil {
            unwritableSince = now
        }
    }

    /// The first request head went to the WebSocket upgrade decision.
    mutating func firstHeadHandedOver() {
        isUntracked = true
        hasPartialHead = false
        headStarted = nil
        idleSince = nil
    }

    /// HTTP tracking began: the connection was not upgraded.
    mutating func trackingBegan() {
        isUntracked = false
    }

    /// A request head arrived.
    mutating func headReceived() {
        hasPartialHead = false
        headStarted = nil
        idleSince = nil
        isReadingBody = true
        unansweredRequests += 1
    }

    /// A request's end arrived.
    mutating func requestEnded() {
        isReadingBody = false
    }

    /// The answer to the oldest unanswered request began.
    mutating func answerStarted() {
        isAnswering = true
    }

    /// The answer to the oldest unanswered request ended.
    mutating func answerEnded(at now: NIODeadline) {
        isAnswering = false
        unansweredRequests = max(0, unansweredRequests - 1)
        if unansweredRequests == 0 { idleSince = now }
    }

    /// The earliest moment the connection's time runs out, and why; `nil` while no timeout runs.
    var nextExpiry: (deadline: NIODeadline, expiry: Expiry)? {
        let stalled = unwritableSince.map { (deadline: $0 + bodyTimeout, expiry: Expiry.answerStalled) }
        guard let request = requestExpiry else { return stalled }
        guard let stalled else { return request }
        return stalled.deadline < request.deadline ? stalled : request
    }

    /// When the request the connection waits for, or reads, runs out of time.
    private var requestExpiry: (deadline: NIODeadline, expiry: Expiry)? {
        if isUntracked { return nil }
        if isReadingBody { return awaitingBytesSince.map { ($0 + bodyTimeout, .bodyStalled) } }
        guard unansweredRequests == 0 else { return nil }
        if let headStarted { return (headStarted + headerTimeout, .headTooSlow) }
        return idleSince.map { ($0 + idleTimeout, .idle) }
    }
}
