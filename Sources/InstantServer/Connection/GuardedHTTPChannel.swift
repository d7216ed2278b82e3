import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1

/// The server's connections: HTTP/1.1 with the listening WebSocket (``ListeningUpgradeChannel``),
/// each guarded by a ``ConnectionGuard`` that enforces the ``HTTPLimits``.
///
/// Hummingbird's own idle timeout cannot be used: it starts only once the first request head has
/// passed the WebSocket upgrade decision, so it never sees a slow or silent first request, and it
/// knows neither body stalls nor connection limits. The guard is the first handler of the
/// pipeline and sees every connection from its start.
struct GuardedHTTPChannel: ServerChildChannel {
    typealias Value = ListeningUpgradeChannel.Value

    /// The channel that handles HTTP and WebSocket upgrades.
    let base: ListeningUpgradeChannel
    /// The limits every connection is held to.
    let limits: HTTPLimits
    /// The server's open connections.
    let registry: ConnectionRegistry

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let connectionGuard = ConnectionGuard(limits: limits, registry: registry, logger: logger)
        do {
            try channel.pipeline.syncOperations.addHandler(connectionGuard, position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let decoder = try channel.pipeline.syncOperations.handler(
                type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try channel.pipeline.syncOperations.addHandler(RequestHeadWatcher(), position: .after(decoder))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 with the listening WebSocket, every connection held to `configuration.httpLimits`
    /// (the connection limit lowered to what the process's descriptor limit allows); listening
    /// WebSockets ping on their own (``ListeningWebSocketHandler``), and sync requests are answered
    /// ahead of the router (``SyncRouteHandler``).
    static func guardedHTTP1(
        listening: ListeningEndpoint,
        sync: SyncEndpoint,
        configuration: InstantServerConfiguration,
        logger: Logger
    ) -> HTTPServerBuilder {
        let limits = configuration.httpLimits
        let descriptorLimit = DescriptorLimit.current()
        let maxConnections = limits.effectiveMaxConnections(descriptorLimit: descriptorLimit)
        if maxConnections < limits.maxConnections {
            logger.notice(
                "Serving at most \(maxConnections) connections at once, not \(limits.maxConnections): the descriptor limit is \(descriptorLimit ?? 0) (ulimit -n). Raise it to serve more."
            )
        }
        let registry = ConnectionRegistry(maxConnections: maxConnections, logger: logger)
        let channelConfiguration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(
                additionalChannelHandlers: [
                    RequestProgressWatcher(), SyncRouteHandler(endpoint: sync, logger: logger),
                ],
                idleTimeout: nil,
                httpDecoderConfiguration: .init(
                    maxHeaderFieldSize: limits.maxHeaderSize,
                    maxHeaderListSize: limits.maxHeaderSize
                )
            ),
            ws: .init(maxFrameSize: configuration.clientLimits.maxSocketMessageSize)
        )
        return HTTPServerBuilder { responder in
            GuardedHTTPChannel(
                base: ListeningUpgradeChannel(
                    responder: responder,
                    configuration: channelConfiguration,
                    listening: listening
                ),
                limits: limits,
                registry: registry
            )
        }
    }
}
