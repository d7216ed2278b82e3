import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTPTypes

/// The sync route as connections answer it ahead of the router (``SyncRouteHandler``).
public struct SyncEndpoint: Sendable {
    let api: InstantAPI
    let verifier: ClientTokenVerifier?
    /// Where answers are counted, as ``MetricsMiddleware`` counts the router's.
    let metrics: RequestMetrics
    /// The `Server` header of every answer.
    let serverName: String
    /// Where the requests it applies are counted while they run.
    let underWay: SyncRequestsUnderWay

    /// The sync request a head starts, if a connection answers it itself: `POST` to a sync path
    /// without an `Expect` header (the router answers such requests, as it answers the others).
    func route(of head: HTTPRequest) -> ClientRoutePath? {
        guard head.method == .post, head.headerFields.value(of: .expect) == nil, let path = head.path else {
            return nil
        }
        return ClientRoutePath(path, route: "sync")
    }

    /// The logger of a request, with its id (`hb.request.id`, and `request.id`: the caller's
    /// `X-Request-Id` when usable), as the router's requests have them.
    func logger(for request: SyncHTTPRequest, from logger: Logger) -> (logger: Logger, id: String) {
        let id = RequestLog.usableID(request.head.headerFields) ?? request.generatedID
        var logger = logger
        logger[metadataKey: "hb.request.id"] = "\(request.generatedID)"
        logger[metadataKey: "request.id"] = "\(id)"
        return (logger, id)
    }

    /// The answer to a sync request: its head (the router's headers: content type, length, security
    /// headers, request id, date, server) and body; logged and counted as the router's answers are.
    func answer(_ request: SyncHTTPRequest, _ result: Result<SyncAnswerBody, APIError>, id: String, logger: Logger)
        -> (head: HTTPResponse, body: SyncAnswerBody)
    {
        var head: HTTPResponse
        let body: SyncAnswerBody
        switch result {
        case .success(let answer):
            head = HTTPResponse(status: .ok, headerFields: [.contentType: "application/json; charset=utf-8"])
            body = answer
        case .failure(let error):
            head = HTTPResponse(status: error.status, headerFields: error.answerHeaders)
            body = SyncAnswerBody(ByteBuffer(bytes: error.body))
        }
        head.headerFields[.contentLength] = String(body.readableBytes)
        ResponseSecurityHeaders.add(to: &head.headerFields)
        head.headerFields[RequestLog.headerName] = id
        head.headerFields[.date] = HTTPDate.now()
        head.headerFields[.server] = serverName
        let path = request.head.path.map { String($0.prefix { $0 != "?" }) } ?? ""
        RequestLog.answered(request.head.method, path, status: head.status, since: request.started, logger: logger)
        metrics.record(
            request.head.method,
            route: request.route.syncTemplate,
            status: head.status, duration: ContinuousClock.now - request.started)
        return (head, body)
    }
}

/// Answers sync requests (`POST /i/d/{documentID}[/l/{layerName}]/sync`) on the connection,
/// ahead of Hummingbird's router, and passes every other request on to it.
///
/// A push is the request clients make most, and over HTTP it cost the server about twice what the
/// same push costs on a listening WebSocket: the router's path (the request handed to a task
/// through an async channel, the middleware chain, the answer handed back) was most of the
/// difference. Here the request's parts are gathered on the event loop and one task applies it
/// (on the connection's loop, as a WebSocket's sync request is), with the route's checks and
/// answer, and the middleware's request id, security headers, log line and metrics
/// (``SyncEndpoint``). The order of the answers stays the order of the requests
/// (``SyncRouteStateMachine``).
///
/// Added after the HTTP codec and the ``RequestProgressWatcher``, which see its answers as the
/// router's.
final class SyncRouteHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let endpoint: SyncEndpoint
    private let logger: Logger
    private var machine: SyncRouteStateMachine
    private var context: ChannelHandlerContext?
    private var executor: EventLoopTaskExecutor?
    /// A read asked for while reads were held, made once they are not.
    private var heldRead = false
    /// What reached the handler while a sync request was under way and would overtake its answer
    /// if passed on at once (the router's connection handling, which does not see these requests,
    /// would close the connection or stop reading): passed on, in order, once nothing is under way.
    private var heldEvents: [HeldEvent] = []
    /// Whether ``resume(context:)`` runs (a request it passes on may finish within it), and
    /// whether it was asked to meanwhile.
    private var isResuming = false
    private var resumesAgain = false

    private enum HeldEvent {
        /// The server's shutdown.
        case quiesce
        /// The end of the client's input, or another event.
        case event(Any)
        /// A failure of the connection.
        case error(any Error)
    }

    init(endpoint: SyncEndpoint, logger: Logger) {
        self.endpoint = endpoint
        self.logger = logger
        machine = SyncRouteStateMachine(bodyLimit: endpoint.api.syncBodyLimit)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        executor = EventLoopTaskExecutor(context.eventLoop)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        perform(machine.read(unwrapInboundIn(data), isSyncRoute: endpoint.route(of:)), context: context)
        passHeldEvents(context: context)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let ends = if case .end = unwrapOutboundIn(data) { true } else { false }
        context.write(data, promise: promise)
        if ends { perform(machine.routerAnswered(), context: context) }
    }

    func read(context: ChannelHandlerContext) {
        if machine.holdsReads {
            heldRead = true
        } else {
            context.read()
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard mustHold else {
            if event is ChannelShouldQuiesceEvent { machine.routeEverything() }
            context.fireUserInboundEventTriggered(event)
            return
        }
        heldEvents.append(event is ChannelShouldQuiesceEvent ? .quiesce : .event(event))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A whole request's answer goes out first; one whose body was arriving is dropped with it.
        guard machine.isWhole || machine.hasWaitingParts else {
            machine.abandonRequest()
            context.fireErrorCaught(error)
            return
        }
        heldEvents.append(.error(error))
    }

    /// Whether an event would overtake a sync request's answer, or parts waiting for it.
    private var mustHold: Bool { !machine.isIdle || machine.hasWaitingParts || !heldEvents.isEmpty }

    private func perform(_ action: SyncRouteStateMachine.Action, context: ChannelHandlerContext) {
        switch action {
        case .none:
            return
        case .route(let part):
            context.fireChannelRead(wrapInboundOut(part))
        case .authorize(let request):
            if let outcome = endpoint.api.authorizeSyncAtOnce(request, verifier: endpoint.verifier) {
                perform(machine.authorized(outcome), context: context)
                return
            }
            let (logger, _) = endpoint.logger(for: request, from: logger)
            run(context: context) { endpoint in
                await endpoint.api.authorizeSync(request, verifier: endpoint.verifier, logger: logger)
            } then: { handler, outcome, context in
                handler.perform(handler.machine.authorized(outcome), context: context)
                handler.resume(context: context)
            }
        case .answer(let request):
            let (logger, id) = endpoint.logger(for: request, from: logger)
            if let refusal = request.refusal {
                finish(request, endpoint.answer(request, .failure(refusal), id: id, logger: logger), context: context)
                return
            }
            guard context.channel.isActive else { return }
            run(context: context) { endpoint in
                let result = await endpoint.api.applySync(request, logger: logger)
                return endpoint.answer(request, result, id: id, logger: logger)
            } then: { handler, answer, context in
                handler.finish(request, answer, context: context)
            }
        }
    }

    /// Runs `work` in a task on the loop that ``SyncRequestsUnderWay`` chooses (most often the
    /// connection's), then `then` on the connection's loop with its outcome if the handler is still
    /// in the pipeline.
    private func run<Outcome: Sendable>(
        context: ChannelHandlerContext, _ work: @escaping @Sendable (SyncEndpoint) async -> Outcome,
        then: @escaping (SyncRouteHandler, Outcome, ChannelHandlerContext) -> Void
    ) {
        let loop = context.eventLoop
        let handler = NIOLoopBound(self, eventLoop: loop)
        let done = NIOLoopBound(then, eventLoop: loop)
        let endpoint = endpoint
        let underWay = endpoint.underWay.started(arrivedOn: loop)
        Task(executorPreference: underWay.executor ?? executor) {
            let outcome = await work(endpoint)
            endpoint.underWay.ended(underWay)
            loop.execute {
                guard let context = handler.value.context else { return }
                done.value(handler.value, outcome, context)
            }
        }
    }

    /// Writes a sync request's answer, then goes on with what waited for it.
    private func finish(
        _ request: SyncHTTPRequest, _ answer: (head: HTTPResponse, body: SyncAnswerBody), context: ChannelHandlerContext
    ) {
        context.write(wrapOutboundOut(.head(answer.head)), promise: nil)
        // Part by part: the records an answer shares with the others of its group go out from where
        // they were written once for all of them.
        for part in answer.body.buffers { context.write(wrapOutboundOut(.body(part)), promise: nil) }
        if request.closesConnection {
            // The output only: what the client still sends is read (and dropped) rather than answered
            // with a reset, which could lose the answer on its way.
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                channel.close(mode: .output, promise: nil)
            }
            machine.routeEverything()
            return
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        machine.answered()
        resume(context: context)
    }

    /// Goes on with the parts that waited, the held read and the held events, as far as nothing
    /// holds them any longer.
    ///
    /// A request that finishes within it (a waiting request refused at once, or one the router
    /// answers as it is handed on) asks to resume again: the call that runs goes round once more
    /// rather than running a second one inside it, so that the end of a read and the held events
    /// are handed on once, after every part before them.
    private func resume(context: ChannelHandlerContext) {
        guard !isResuming else {
            resumesAgain = true
            return
        }
        isResuming = true
        defer { isResuming = false }
        repeat {
            resumesAgain = false
            var routed = false
            while let part = machine.nextWaitingPart() {
                let action = machine.read(part, isSyncRoute: endpoint.route(of:))
                if case .route = action { routed = true }
                perform(action, context: context)
            }
            // The router's channel hands on what it was given at the end of a read.
            if routed { context.fireChannelReadComplete() }
            if heldRead, !machine.holdsReads {
                heldRead = false
                context.read()
            }
            passHeldEvents(context: context)
        } while resumesAgain
    }

    private func passHeldEvents(context: ChannelHandlerContext) {
        while !heldEvents.isEmpty, machine.isIdle, !machine.hasWaitingParts {
            switch heldEvents.removeFirst() {
            case .quiesce:
                machine.routeEverything()
                context.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
            case .event(let event):
                context.fireUserInboundEventTriggered(event)
            case .error(let error):
                context.fireErrorCaught(error)
            }
        }
    }
}
