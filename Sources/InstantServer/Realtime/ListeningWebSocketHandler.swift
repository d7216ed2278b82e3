import Foundation
import InstantJSON
import Logging
import NIOCore
import NIOWebSocket

/// A listening WebSocket, served by a channel handler on its connection's event loop.
///
/// An idle listener holds no task: the layer's events hand it its state on its event loop when
/// something happens; registration, catching up (after registering, or once a slow client takes
/// more again) and answering a sync request each run a short task that ends with its work; the
/// pings and the token's expiry are timers of the event loop. What an idle listener costs is its
/// NIO channel, this handler and its entry in ``LayerEvents`` (docs/BENCHMARKS.md, "Light
/// listeners").
///
/// What it sends, in order on the connection: `{"revision": M}` whenever the layer passes what the
/// client was told (coalesced) or, for a session that receives records, `{"revision": M, "since":
/// L, "records": [...]}` for each commit this node has the change message of, from the client's
/// revision on (``ChangeMessage``); `{"presence": [...]}` whenever the listening users change; the
/// answer to each sync request the client sends on it, one request at a time, in order. While a
/// sync request is being answered, what happens on the layer waits for the answer, which covers
/// the commits up to its revision: those are not sent again as change messages. It closes
/// the WebSocket with `1008` and a reason when the token expires or is revoked, with `1009` when a
/// message is larger than ``ListeningEndpoint/maxMessageSize``, and with `1001` when the client
/// does not answer a ping before the next or the server shuts down.
///
/// All its state is touched on the event loop only.
final class ListeningWebSocketHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    /// The largest frame of a message this handler sends: a longer message goes out in several
    /// frames, which WebSocket clients put together again.
    static let frameSize = 16_384
    /// Sync requests read and waiting for their turn before reading pauses.
    static let maxWaitingRequests = 8
    /// The most change messages kept for a client while its sync request is being answered.
    static let maxHeldChangeMessages = 64
    /// How long a close waits for the client's close before the connection is cut.
    static let closeTimeout = TimeAmount.seconds(1)

    private let session: ListeningSession
    private let endpoint: ListeningEndpoint
    private let logger: Logger
    private var context: ChannelHandlerContext?
    /// The connection's loop, which the tasks answering sync requests prefer.
    private var executor: EventLoopTaskExecutor?
    /// The listener's id in the layer's events, once registered.
    private var listener: UUID?
    /// The revision the client was last told, by a change message, a revision or an answer: the
    /// next change message starts from it.
    private var told: Int64
    private var sentPresenceVersion: Int?
    private var isCatchingUp = false
    private var wokeMeanwhile = false
    /// Sync requests read and not answered yet (`nil`: a binary message), oldest first.
    private var requests: [ByteBuffer?] = []
    private var isAnswering = false
    /// What the layer's events handed over while a sync request was being answered, sent after
    /// the answer (less what it covers).
    private var heldForAnswer: LayerEvents.State?
    /// The message being received in several frames, and whether it is text.
    private var fragments: (data: ByteBuffer, isText: Bool)?
    private var awaitsPong = false
    private var pings: RepeatedTask?
    private var expiry: Scheduled<Void>?
    private var isClosing = false
    private var isClosed = false

    init(session: ListeningSession, endpoint: ListeningEndpoint, logger: Logger) {
        self.session = session
        self.endpoint = endpoint
        self.logger = logger
        self.told = session.since
    }

    // MARK: Lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let loop = context.eventLoop
        executor = EventLoopTaskExecutor(loop)
        let handler = NIOLoopBound(self, eventLoop: loop)
        let interval = TimeAmount(endpoint.pingInterval)
        pings = loop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in handler.value.ping() }
        checkExpiry()
        let (events, session) = (endpoint.events, session)
        Task {
            do throws(LayerEvents.Refusal) {
                let id = try await events.listen(
                    on: session.layer, token: session.token, isVisible: true,
                    recordsAfter: session.receivesRecords ? session.since : nil,
                    notifyingOn: loop, notify: { state in handler.value.notified(state) })
                loop.execute { handler.value.registered(id) }
            } catch {
                // Another connection took the last place between the upgrade and now.
                loop.execute { handler.value.close(.policyViolation, error.reason) }
            }
        }
    }

    private func registered(_ id: UUID) {
        guard !isClosed else {
            let events = endpoint.events
            Task { await events.stopListening(id) }
            return
        }
        listener = id
        catchUp(readingStoredRevision: true)
        answerNextRequest()
    }

    func channelInactive(context: ChannelHandlerContext) {
        isClosed = true
        isClosing = true
        pings?.cancel()
        expiry?.cancel()
        if let listener {
            let events = endpoint.events
            Task { await events.stopListening(listener) }
        }
        context.fireChannelInactive()
    }

    /// The server shuts down (it waits for its connections to close): the client is told to go,
    /// and reconnects, to another node where there is one.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            close(.goingAway, "The server is shutting down.")
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("A listening WebSocket failed", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    /// Sends a close frame with `code` and `reason`, and cuts the connection once the client
    /// answered it or after ``closeTimeout``.
    private func close(_ code: WebSocketErrorCode, _ reason: String) {
        guard !isClosing, let context else { return }
        isClosing = true
        var data = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        data.write(webSocketErrorCode: code)
        data.writeString(reason)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)))
            .whenComplete { _ in
                channel.eventLoop.scheduleTask(in: Self.closeTimeout) { channel.close(promise: nil) }
            }
    }

    // MARK: Timers

    private func ping() {
        guard !isClosing, let context else { return }
        if awaitsPong {
            close(.goingAway, "No answer to the last ping.")
            return
        }
        awaitsPong = true
        context.writeAndFlush(
            wrapOutboundOut(
                WebSocketFrame(fin: true, opcode: .ping, data: context.channel.allocator.buffer(capacity: 0))),
            promise: nil)
    }

    /// Closes the WebSocket when the token has expired, or checks again when it will have (at
    /// least daily, so that no `exp`, however far, overflows a timer).
    private func checkExpiry() {
        guard let context else { return }
        let left = session.token.timeLeft(atMost: .seconds(86_400))
        guard left > .zero else {
            close(.policyViolation, "The token expired; reconnect with a new token.")
            return
        }
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        expiry = context.eventLoop.scheduleTask(in: TimeAmount(left)) { handler.value.checkExpiry() }
    }

    // MARK: Announcing changes

    /// Reads what the listener should know now and sends it; a wake-up during the read makes it
    /// read once more after.
    private func catchUp(readingStoredRevision: Bool) {
        guard let listener, let context, !isClosing else { return }
        if isCatchingUp {
            wokeMeanwhile = true
            return
        }
        isCatchingUp = true
        let loop = context.eventLoop
        let handler = NIOLoopBound(self, eventLoop: loop)
        let (events, session, storedRevision) = (endpoint.events, session, endpoint.storedRevision)
        let seen = session.receivesRecords ? told : nil
        Task {
            let stored = readingStoredRevision ? try? await storedRevision(session.layer) : nil
            let state = await events.state(of: session.layer, listener: listener, changesAfter: seen)
            loop.execute {
                let handler = handler.value
                handler.isCatchingUp = false
                handler.send(state, stored: stored)
                if handler.wokeMeanwhile {
                    handler.wokeMeanwhile = false
                    handler.catchUp(readingStoredRevision: false)
                }
            }
        }
    }

    /// What the layer's events handed over when something happened: sent at once, unless a
    /// catch-up is reading meanwhile (it reads again after) or the listener is not registered yet
    /// (registration catches up).
    private func notified(_ state: LayerEvents.State) {
        guard listener != nil else { return }
        if isCatchingUp {
            wokeMeanwhile = true
            return
        }
        // A revoked token closes the connection at once, whatever is being answered.
        if isAnswering && !state.isRevoked {
            hold(state)
            return
        }
        send(state, stored: nil)
    }

    /// Keeps `state` until the answer being written has gone out. Past
    /// ``maxHeldChangeMessages`` (an answer that takes long on a busy layer), the change messages
    /// are dropped: the client is then told the revision, and pulls.
    private func hold(_ state: LayerEvents.State) {
        if heldForAnswer == nil {
            heldForAnswer = state
        } else {
            heldForAnswer?.append(state, keepingAtMost: Self.maxHeldChangeMessages)
        }
    }

    /// Sends what `state` has that the client was not told. While the connection does not take
    /// more (a slow client), nothing is sent: once it does, a catch-up sends the change messages
    /// still kept, or the newest revision.
    private func send(_ state: LayerEvents.State, stored: Int64?) {
        guard let context, !isClosing else { return }
        if state.isRevoked {
            close(.policyViolation, "The token was revoked; get a new token.")
            return
        }
        guard context.channel.isWritable else {
            wokeMeanwhile = true
            return
        }
        var messages: [(text: ByteBuffer, kind: ServerMetrics.ListenerMessage)] = []
        for message in state.changes where message.revision > told {
            guard message.since == told, let text = message.text(for: session.token) else { break }
            messages.append((text, .records))
            told = message.revision
        }
        let revision = max(state.revision ?? -1, stored ?? -1)
        if revision > told {
            told = revision
            messages.append(
                (ByteBuffer(bytes: JSONValue.object(["revision": .integer(revision)]).serialized()), .revision))
        }
        if state.presenceVersion != sentPresenceVersion {
            sentPresenceVersion = state.presenceVersion
            messages.append((state.presenceMessage, .presence))
        }
        for message in messages {
            writeText(CollectionOfOne(message.text), context: context)
            endpoint.events.metrics.sent(message.kind)
        }
        if !messages.isEmpty { context.flush() }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, wokeMeanwhile, !isCatchingUp {
            wokeMeanwhile = false
            catchUp(readingStoredRevision: false)
        }
        context.fireChannelWritabilityChanged()
    }

    /// Writes a text message that is already UTF-8, given in parts (a sync answer's, whose records
    /// its group's answers share: ``SyncAnswerBody``), in frames of at most ``frameSize``. Each part
    /// goes out as slices of itself, never copied into one buffer with the others: a shorter part
    /// is a frame of its own.
    private func writeText(_ parts: some Collection<ByteBuffer>, context: ChannelHandlerContext) {
        // Each frame is held back until the next one comes, so that the last goes out as the end.
        var held: ByteBuffer?
        var opcode = WebSocketOpcode.text
        func send(_ frame: ByteBuffer) {
            if let earlier = held {
                context.write(wrapOutboundOut(WebSocketFrame(fin: false, opcode: opcode, data: earlier)), promise: nil)
                opcode = .continuation
            }
            held = frame
        }
        for part in parts {
            var rest = part
            while rest.readableBytes > Self.frameSize, let frame = rest.readSlice(length: Self.frameSize) {
                send(frame)
            }
            if rest.readableBytes > 0 { send(rest) }
        }
        let last = WebSocketFrame(fin: true, opcode: opcode, data: held ?? ByteBuffer())
        context.write(wrapOutboundOut(last), promise: nil)
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .ping:
            guard !isClosing else { return }
            context.writeAndFlush(
                wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        case .pong:
            awaitsPong = false
        case .connectionClose:
            if isClosing {
                context.close(promise: nil)
            } else {
                // The client's close: answer it with its code, then the connection ends.
                isClosing = true
                var data = frame.unmaskedData
                let code = data.readWebSocketErrorCode() ?? .normalClosure
                var answer = context.channel.allocator.buffer(capacity: 2)
                answer.write(webSocketErrorCode: code)
                let channel = context.channel
                context.writeAndFlush(
                    wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: answer))
                ).whenComplete { _ in channel.close(promise: nil) }
            }
        case .text, .binary:
            guard fragments == nil else { return protocolError("A new message began before the last one ended.") }
            let message = (data: frame.unmaskedPayload, isText: frame.opcode == .text)
            guard fits(message.data) else { return }
            if frame.fin { received(message) } else { fragments = message }
        case .continuation:
            guard var message = fragments else { return protocolError("A continuation frame without a message.") }
            var data = frame.unmaskedPayload
            message.data.writeBuffer(&data)
            guard fits(message.data) else { return }
            fragments = frame.fin ? nil : message
            if frame.fin { received(message) }
        default:
            break
        }
    }

    /// Whether a message (so far) is within the limit; if not, the WebSocket closes with `1009`.
    private func fits(_ data: ByteBuffer) -> Bool {
        guard data.readableBytes > endpoint.maxMessageSize else { return true }
        fragments = nil
        close(
            .messageTooLarge,
            "A message is larger than \(endpoint.maxMessageSize) bytes; send large pushes over HTTP in parts.")
        return false
    }

    private func protocolError(_ reason: String) {
        fragments = nil
        close(.protocolError, reason)
    }

    // MARK: Sync requests

    private func received(_ message: (data: ByteBuffer, isText: Bool)) {
        guard !isClosing, let context else { return }
        requests.append(message.isText ? message.data : nil)
        if requests.count >= Self.maxWaitingRequests {
            // Read no more until the waiting requests are answered.
            context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
        }
        answerNextRequest()
    }

    /// Answers the oldest waiting request, if none is being answered; the answer goes out before
    /// the next is taken.
    private func answerNextRequest() {
        guard !isAnswering, !isClosing, let listener, let context, !requests.isEmpty else { return }
        isAnswering = true
        let message = requests.removeFirst()
        if requests.count == Self.maxWaitingRequests - 1 {
            context.channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in }
        }
        let loop = context.eventLoop
        let handler = NIOLoopBound(self, eventLoop: loop)
        let (answer, token, logger, metrics) = (endpoint.answer, session.token, logger, endpoint.events.metrics)
        let started = ContinuousClock.now
        // Counted before the task is made: a shutdown from here on waits for the answer. On the
        // loop the requests under way choose, as an HTTP request's (most often the connection's).
        let underWay = endpoint.underWay
        let work = underWay.started(arrivedOn: loop)
        Task(executorPreference: work.executor ?? executor) {
            let answered = await answer(message, token, listener, logger)
            underWay.ended(work)
            loop.execute {
                let handler = handler.value
                handler.isAnswering = false
                guard !handler.isClosing, let context = handler.context else { return }
                if let revision = answered.revision, revision > handler.told { handler.told = revision }
                handler.writeText(answered.text.buffers, context: context)
                metrics.answeredSocketSyncRequest(in: ContinuousClock.now - started)
                if let held = handler.heldForAnswer {
                    handler.heldForAnswer = nil
                    // A catch-up under way reads the state again once it ends, from the answer's
                    // revision on; what was held may be older than what it sends.
                    if handler.isCatchingUp { handler.wokeMeanwhile = true } else { handler.send(held, stored: nil) }
                }
                context.flush()
                handler.answerNextRequest()
            }
        }
    }
}

extension TimeAmount {
    /// The same span, to the nanosecond (saturating beyond about 292 years).
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let (nanoseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        self = .nanoseconds(
            overflow ? .max : nanoseconds.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue)
    }
}
