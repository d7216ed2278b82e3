import NIOCore
import NIOHTTP1

/// Sits right after the HTTP request decoder and tells the ``ConnectionGuard`` of its connection
/// when the first request head is complete (it goes to the WebSocket upgrade decision before any
/// HTTP handler sees it) and when the decoder fails (a head too large or malformed).
///
/// It reads only the first message: after a WebSocket upgrade the decoder is gone and raw bytes
/// pass here, which it forwards untouched.
final class RequestHeadWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    private var connectionGuard: ConnectionGuard?
    private var sawFirstMessage = false

    func handlerAdded(context: ChannelHandlerContext) {
        connectionGuard = try? context.pipeline.syncOperations.handler(type: ConnectionGuard.self)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !sawFirstMessage {
            sawFirstMessage = true
            // The decoder's first message is always the first request's head.
            if case .head = Self.unwrapInboundIn(data) { connectionGuard?.firstHeadHandedOver() }
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if connectionGuard?.decoderFailed(error) == true { return }
        context.fireErrorCaught(error)
    }
}
