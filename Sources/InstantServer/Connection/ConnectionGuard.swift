import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1

/// The first handler of every connection, next to the socket: it enforces the ``HTTPLimits`` of
/// the connection.
///
/// It sees every byte that arrives, every time the server asks for more and every change of the
/// socket's writability; ``RequestHeadWatcher`` and ``RequestProgressWatcher`` tell it about
/// requests and answers. From that, a ``ConnectionTimeline`` says when the connection's time runs
/// out, and the guard closes it then, with a `408` when a request was cut short. The guard also
/// keeps its connection's entry in the ``ConnectionRegistry`` up to date, so that the connection
/// limit closes connections that wait for a request and never those that are answering.
///
/// It answers a request it refuses (too slow, a head too large or malformed) itself, with bytes
/// written straight to the socket, then closes its side and discards what still arrives for a
/// short while, so that the client reads the answer instead of a reset.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// How long a refused connection discards what the client still sends before it is closed,
    /// at most: the header timeout, or 2 s when that is longer.
    static let maxLinger = Duration.seconds(2)

    private enum State {
        /// Serving requests.
        case open
        /// An answer was refused; the connection closes once the client does or the linger ends.
        case lingering
        /// Closed or closing.
        case closed
    }

    private let limits: HTTPLimits
    private let registry: ConnectionRegistry
    private let logger: Logger
    private var timeline: ConnectionTimeline
    private var state = State.open
    private var context: ChannelHandlerContext?
    private var timer: Scheduled<Void>?
    private var timerDeadline: NIODeadline?
    private var isRegistered = false
    /// Whether the registry counts the connection as waiting for a request.
    private var isRegisteredWaiting = true
    /// Whether the handlers after the guard learned that no more input comes.
    private var inputClosedForwarded = false
    /// Whether the request body being read was failed because the connection closed.
    private var failedUnfinishedBody = false

    /// A guard for a connection that opens now.
    init(limits: HTTPLimits, registry: ConnectionRegistry, logger: Logger) {
        self.limits = limits
        self.registry = registry
        self.logger = logger
        self.timeline = ConnectionTimeline(limits: limits, openedAt: .now())
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { register(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimer()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        register(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if state != .closed { endInput(context: context) }
        state = .closed
        cancelTimer()
        if isRegistered { registry.remove(ObjectIdentifier(context.channel)) }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard state == .open else { return }  // a refused connection discards what still arrives
        timeline.bytesReceived(at: .now())
        context.fireChannelRead(data)
        rearm()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // A refused connection keeps reading (and discarding) until the client closes, whatever
        // the handlers after the guard want.
        guard state != .lingering else { return context.read() }
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        if state == .open {
            timeline.readRequested(at: .now())
            rearm()
        }
        context.read()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        timeline.writabilityChanged(isWritable: context.channel.isWritable, at: .now())
        rearm()
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case ChannelEvent.inputClosed:
            if state == .lingering {
                close()
                return
            }
            inputClosedForwarded = true
        case is ChannelShouldQuiesceEvent where state == .open && timeline.isWaitingForRequest:
            // The server shuts down: a connection without a request in progress closes now.
            close()
            return
        default:
            break
        }
        context.fireUserInboundEventTriggered(event)
    }

    // MARK: Requests and answers (from the watchers)

    /// The first request head went to the WebSocket upgrade decision.
    func firstHeadHandedOver() {
        update { $0.firstHeadHandedOver() }
    }

    /// HTTP tracking began: the connection was not upgraded.
    func trackingBegan() {
        update { $0.trackingBegan() }
    }

    /// A request head arrived.
    func headReceived() {
        update { $0.headReceived() }
    }

    /// A request's end arrived.
    func requestEnded() {
        update { $0.requestEnded() }
    }

    /// An answer began.
    func answerStarted() {
        update { $0.answerStarted() }
    }

    /// An answer ended.
    func answerEnded() {
        update { $0.answerEnded(at: .now()) }
    }

    /// The request decoder failed. Returns whether the guard took care of the error: a head that
    /// is too large or malformed is answered here (431 or 400) and the connection closed; an
    /// error in a body goes on to the request's handler, so that it never takes a cut body
    /// for a whole one.
    func decoderFailed(_ error: any Error) -> Bool {
        guard error is HTTPParserError || error is ByteToMessageDecoderError else { return false }
        guard state == .open else { return true }
        if timeline.isReadingBody, !timeline.isUntracked { return false }
        if timeline.unansweredRequests > 0 || timeline.isUntracked {
            close()
        } else if let parserError = error as? HTTPParserError, parserError == .headerOverflow {
            refuse(
                .requestHeaderFieldsTooLarge,
                "The request head is larger than \(limits.maxHeaderSize) bytes. Send fewer or shorter header "
                    + "fields; the server's limit is --max-header-size (MAX_HEADER_SIZE)."
            )
        } else {
            refuse(
                .badRequest,
                "The request is not valid HTTP/1.1 (\(error)). Send a well-formed request line and header fields."
            )
        }
        return true
    }

    /// Closes a connection the registry chose to make room for a newer one.
    func evict() {
        guard state == .open else { return }
        logger.debug("Closing the connection that waited longest for a request: the connection limit is reached")
        close()
    }

    // MARK: Deadlines

    /// Applies a change to the timeline, then updates the registry and the timer.
    private func update(_ change: (inout ConnectionTimeline) -> Void) {
        guard state == .open else { return }
        change(&timeline)
        if isRegistered, let context, timeline.isWaitingForRequest != isRegisteredWaiting {
            isRegisteredWaiting = timeline.isWaitingForRequest
            registry.setWaiting(ObjectIdentifier(context.channel), isRegisteredWaiting)
        }
        rearm()
    }

    /// Enters the connection in the registry once it is active; a connection the registry refuses
    /// gets 503 and is closed.
    private func register(context: ChannelHandlerContext) {
        guard !isRegistered, state == .open else { return }
        isRegistered = true
        let admitted = registry.admit(
            ObjectIdentifier(context.channel),
            guard: NIOLoopBound(self, eventLoop: context.eventLoop),
            waiting: timeline.isWaitingForRequest
        )
        isRegisteredWaiting = timeline.isWaitingForRequest
        guard admitted else {
            isRegistered = false
            answerAndClose(
                .serviceUnavailable,
                "The server has as many connections open as it may (\(registry.maxConnections)) and all of them are "
                    + "busy. Retry later; the limit is --max-connections (MAX_CONNECTIONS) and the process's "
                    + "descriptor limit (ulimit -n)."
            )
            return
        }
        rearm()
    }

    /// Makes the timer fire at the timeline's next expiry, unless it fires earlier already (it
    /// looks again then).
    private func rearm() {
        guard state == .open, let context, let next = timeline.nextExpiry else { return }
        if let timerDeadline, timerDeadline <= next.deadline { return }
        timer?.cancel()
        timerDeadline = next.deadline
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: next.deadline) { [self] in
            timer = nil
            timerDeadline = nil
            expireIfDue()
        }
    }

    /// Stops the timer, if one runs.
    private func cancelTimer() {
        timer?.cancel()
        timer = nil
        timerDeadline = nil
    }

    /// Ends the connection if the timeline's next expiry has passed (with 408 when a request was
    /// cut short, silently otherwise), or waits for it again.
    private func expireIfDue() {
        guard state == .open, let next = timeline.nextExpiry else { return }
        guard next.deadline <= .now() else {
            rearm()
            return
        }
        switch next.expiry {
        case .headTooSlow where timeline.hasPartialHead:
            refuse(
                .requestTimeout,
                "The request head did not arrive within \(limits.headerTimeout). Send the request line and "
                    + "header fields at once; the server's limit is --header-timeout (HTTP_HEADER_TIMEOUT)."
            )
        case .bodyStalled where timeline.unansweredRequests > 0 && !timeline.isAnswering:
            refuse(
                .requestTimeout,
                "No bytes of the request body arrived for \(limits.bodyTimeout). Keep sending the body; the "
                    + "server's limit is --body-timeout (HTTP_BODY_TIMEOUT)."
            )
        case .headTooSlow, .bodyStalled, .answerStalled, .idle:
            logger.debug("Closing a connection", metadata: ["reason": "\(next.expiry)"])
            close()
        }
    }

    // MARK: Closing

    /// Answers `status` with `reason`, closes the guard's side of the connection and discards what
    /// the client still sends until it closes too, for at most ``maxLinger`` (or the header
    /// timeout when shorter).
    private func refuse(_ status: HTTPResponse.Status, _ reason: String) {
        guard state == .open, let context else { return }
        logger.debug("Refusing a request", metadata: ["status": "\(status.code)", "reason": "\(reason)"])
        state = .lingering
        cancelTimer()
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(Self.answer(status, reason))), promise: nil)
        context.close(mode: .output, promise: nil)
        context.read()
        let linger = TimeAmount(min(limits.headerTimeout, Self.maxLinger))
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: linger) { [self] in close() }
    }

    /// Answers `status` with `reason` and closes the connection at once.
    private func answerAndClose(_ status: HTTPResponse.Status, _ reason: String) {
        guard let context else { return }
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(Self.answer(status, reason))), promise: nil)
        close()
    }

    /// Closes the connection (see ``endInput(context:)``).
    private func close() {
        guard state != .closed, let context else { return }
        state = .closed
        cancelTimer()
        endInput(context: context)
        context.close(promise: nil)
    }

    /// Tells the handlers after the guard that no more input comes, before the connection closes.
    /// A request body being read fails, so that its handler sees an error rather than the end of
    /// a body that was cut short (Hummingbird takes a closed connection for the end of the body).
    /// Otherwise they see the input end, which ends a pending WebSocket upgrade decision quietly
    /// (a closed connection fails it, and Hummingbird logs that as an error).
    private func endInput(context: ChannelHandlerContext) {
        if timeline.isReadingBody, !timeline.isUntracked, !failedUnfinishedBody {
            failedUnfinishedBody = true
            context.fireErrorCaught(
                APIError(.requestTimeout, "The connection was closed before the request body arrived in full."))
        } else if !inputClosedForwarded {
            inputClosedForwarded = true
            context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        }
    }

    /// A complete answer that closes the connection, with the API's error body.
    static func answer(_ status: HTTPResponse.Status, _ reason: String) -> ByteBuffer {
        let body = APIError(status, reason).body
        let head =
            "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n"
            + "Content-Type: application/json; charset=utf-8\r\n"
            + "Content-Length: \(body.count)\r\n"
            + "Connection: close\r\n"
            + ResponseSecurityHeaders.fields.map { "\($0.name): \($0.value)\r\n" }.joined()
            + "\r\n"
        var buffer = ByteBuffer(string: head)
        buffer.writeBytes(body)
        return buffer
    }
}
