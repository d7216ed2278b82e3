import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTPTypes
import Prometheus

/// The sync route as connections answer it ahead of the router (``SyncRouteHandler``).
public struct SyncEndpoint: Sendable {
    let api: InstantAPI
    let verifier: ClientTokenVerifier?
    /// Where answers are counted, as ``MetricsMiddleware`` counts the router's.
    let metrics: PrometheusCollectorRegistry
    /// The `Server` header of every answer.
    let serverName: String

    /// The sync request a head starts, if a connection answers it itself: `POST` to a sync path
    /// without an `Expect` header (the router answers such requests, as it answers the others).
    func route(of head: HTTPRequest) -> ClientRoutePath? {
        guard head.method == .post, head.headerFields[.expect] == nil, let path = head.path else { return nil }
        return ClientRoutePath(path, route: "sync")
    }

    /// The logger of a request, with its id (`hb.request.id`, and `request.id`: the caller's
    /// `X-Request-Id` when usable), as the router's requests have them.
    func logger(for head: HTTPRequest, from logger: Logger) -> (logger: Logger, id: String) {
        let generated = RequestID().description
        let id = RequestLog.usableID(head.headerFields) ?? generated
        var logger = logger
        logger[metadataKey: "hb.request.id"] = "\(generated)"
        logger[metadataKey: "request.id"] = "\(id)"
        return (logger, id)
    }

    /// The answer to a sync request: its head (the router's headers: content type, length, security
    /// headers, request id, date, server) and body; logged and counted as the router's answers are.
    func answer(
        _ request: SyncHTTPRequest, _ result: Result<ByteBuffer, APIError>, id: String,
        started: ContinuousClock.Instant, logger: Logger
    ) -> (head: HTTPResponse, body: ByteBuffer) {
        var head: HTTPResponse
        let body: ByteBuffer
        switch result {
        case .success(let answer):
            head = HTTPResponse(status: .ok, headerFields: [.contentType: "application/json; charset=utf-8"])
            body = answer
        case .failure(let error):
            head = HTTPResponse(status: error.status, headerFields: error.answerHeaders)
            body = ByteBuffer(bytes: error.body)
        }
        head.headerFields[.contentLength] = String(body.readableBytes)
        ResponseSecurityHeaders.add(to: &head.headerFields)
        head.headerFields[RequestLog.headerName] = id
        head.headerFields[.date] = HTTPDate.now()
        head.headerFields[.server] = serverName
        let path = request.head.path.map { String($0.prefix { $0 != "?" }) } ?? ""
        RequestLog.answered(request.head.method, path, status: head.status, since: started, logger: logger)
        RequestMetrics.record(
            in: metrics, request.head.method,
            route: request.route.layer.isEmpty ? "/i/d/{documentID}/sync" : "/i/d/{documentID}/l/{layerName}/sync",
            status: head.status, duration: ContinuousClock.now - started)
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
    /// The server's shutdown, held while a sync request is under way, then passed on (the router's
    /// connection handling, which does not see these requests, closes a connection it finds idle).
    private var heldQuiesce = false

    init(endpoint: SyncEndpoint, logger: Logger) {
        self.endpoint = endpoint
        self.logger = logger
        machine = SyncRouteStateMachine(maxBodySize: endpoint.api.syncBodyLimit.bytes)
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
        passHeldQuiesceIfIdle(context: context)
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
        if event is ChannelShouldQuiesceEvent, !machine.isIdle {
            heldQuiesce = true
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func perform(_ action: SyncRouteStateMachine.Action, context: ChannelHandlerContext) {
        switch action {
        case .none:
            return
        case .route(let part):
            context.fireChannelRead(wrapInboundOut(part))
        case .answer(let request):
            let started = ContinuousClock.now
            let (logger, id) = endpoint.logger(for: request.head, from: logger)
            if let refusal = request.refusal {
                finish(
                    request, endpoint.answer(request, .failure(refusal), id: id, started: started, logger: logger),
                    context: context)
                return
            }
            let loop = context.eventLoop
            let handler = NIOLoopBound(self, eventLoop: loop)
            let (endpoint, verifier) = (endpoint, endpoint.verifier)
            Task(executorPreference: executor) {
                let result = await endpoint.api.applySync(request, verifier: verifier, logger: logger)
                let answer = endpoint.answer(request, result, id: id, started: started, logger: logger)
                loop.execute {
                    guard let context = handler.value.context else { return }
                    handler.value.finish(request, answer, context: context)
                }
            }
        }
    }

    /// Writes a sync request's answer, then goes on with what waited for it.
    private func finish(
        _ request: SyncHTTPRequest, _ answer: (head: HTTPResponse, body: ByteBuffer), context: ChannelHandlerContext
    ) {
        context.write(wrapOutboundOut(.head(answer.head)), promise: nil)
        context.write(wrapOutboundOut(.body(answer.body)), promise: nil)
        if request.closesConnection {
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
            return
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        machine.answered()
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
        passHeldQuiesceIfIdle(context: context)
    }

    private func passHeldQuiesceIfIdle(context: ChannelHandlerContext) {
        guard heldQuiesce, machine.isIdle else { return }
        heldQuiesce = false
        context.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
    }
}
