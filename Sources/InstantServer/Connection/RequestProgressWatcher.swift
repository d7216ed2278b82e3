import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Tells the ``ConnectionGuard`` of its connection when requests arrive and end and when answers
/// begin and end. Hummingbird adds it (as an additional channel handler) to connections that are
/// not upgraded to a WebSocket, before the first request reaches the router.
final class RequestProgressWatcher: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var connectionGuard: ConnectionGuard?

    func handlerAdded(context: ChannelHandlerContext) {
        connectionGuard = try? context.pipeline.syncOperations.handler(type: ConnectionGuard.self)
        connectionGuard?.trackingBegan()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch Self.unwrapInboundIn(data) {
        case .head: connectionGuard?.headReceived()
        case .end: connectionGuard?.requestEnded()
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch Self.unwrapOutboundIn(data) {
        case .head(let response) where response.status.kind != .informational: connectionGuard?.answerStarted()
        case .end: connectionGuard?.answerEnded()
        case .head, .body: break
        }
        context.write(data, promise: promise)
    }
}
