import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// A listening WebSocket the server agreed to open, with what was decided before the upgrade.
struct ListeningSession: Sendable {
    /// The verified token of the listener.
    var token: ClientToken
    /// The layer listened to.
    var layer: LayerEvents.Layer
    /// The revision the client has (`since`).
    var since: Int64
    /// Whether the client asked for the records of each commit (`changes=records`).
    var receivesRecords: Bool
}

/// The server's HTTP/1.1 connections with the upgrade of `.../listen` to a listening WebSocket.
///
/// Unlike Hummingbird's WebSocket channel, which answers every refused upgrade with an empty
/// `400`, a request this channel does not upgrade (a bad token, too many listeners) goes on to the
/// HTTP routes: the long-poll route of the same path answers it with its status and reason.
struct ListeningUpgradeChannel: ServerChildChannel, HTTPChannelHandler {
    /// What a connection became.
    enum UpgradeResult: Sendable {
        /// A listening WebSocket, served by the ``ListeningWebSocketHandler`` added to its pipeline.
        case listening
        case http(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
    }

    struct Value: ServerChildChannelValue {
        let upgradeResult: EventLoopFuture<UpgradeResult>
        let channel: any Channel
        /// The head of an upgrade request that was refused (NIO does not pass it on).
        let refusedUpgrade: NIOLockedValueBox<HTTPRequest?>
    }

    /// Answers HTTP requests.
    let responder: Responder
    /// HTTP/1.1 and WebSocket settings.
    let configuration: HTTP1WebSocketUpgradeChannel.Configuration
    /// Decides whether an upgrade request becomes a listening WebSocket, and serves it.
    let listening: ListeningEndpoint

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let admitted = NIOLockedValueBox<ListeningSession?>(nil)
            let refused = NIOLockedValueBox<HTTPRequest?>(nil)
            let upgrader = NIOTypedWebSocketServerUpgrader<UpgradeResult>(
                maxFrameSize: configuration.ws.maxFrameSize,
                shouldUpgrade: { channel, head in
                    let promise = channel.eventLoop.makePromise(of: HTTPHeaders?.self)
                    promise.completeWithTask {
                        guard let request = try? HTTPRequest(head, secure: false, splitCookie: false) else {
                            return nil
                        }
                        guard
                            let session = await listening.admit(
                                Request(head: request, body: .init(buffer: .init())), logger)
                        else {
                            refused.withLockedValue { $0 = request }
                            return nil
                        }
                        admitted.withLockedValue { $0 = session }
                        return HTTPHeaders()
                    }
                    return promise.futureResult
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        guard let session = admitted.withLockedValue({ $0 }) else {
                            throw ChannelError.inappropriateOperationForState
                        }
                        try channel.pipeline.syncOperations.addHandler(
                            ListeningWebSocketHandler(session: session, endpoint: listening, logger: logger))
                        return .listening
                    }
                }
            )
            let http1 = configuration.http1
            let upgrades = NIOTypedHTTPServerUpgradeConfiguration(
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                        try pipeline.addHandlers(http1.additionalChannelHandlers())
                        try pipeline.addHandler(
                            HTTPConnectionStateHandler(
                                idleTimeout: http1.idleTimeout.map { .nanoseconds($0.nanoseconds) }, logger: logger)
                        )
                        return .http(
                            try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                                wrappingChannelSynchronously: channel,
                                configuration: .init(isOutboundHalfClosureEnabled: true)
                            )
                        )
                    }
                }
            )
            var pipeline = NIOUpgradableHTTPServerPipelineConfiguration(upgradeConfiguration: upgrades)
            // As Hummingbird's own channels: requests are handled one at a time by the async
            // channel, errors and header validation by Hummingbird.
            pipeline.enablePipelining = false
            pipeline.enableErrorHandling = false
            pipeline.enableResponseHeaderValidation = false
            pipeline.decoderConfiguration.maxHeaderFieldSize = http1.httpDecoder.maxHeaderFieldSize
            pipeline.decoderConfiguration.maxHeaderListSize = http1.httpDecoder.maxHeaderListSize
            pipeline.decoderConfiguration.maxHeaderFieldCount = http1.httpDecoder.maxHeaderFieldCount
            let result = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(
                configuration: pipeline)
            return Value(upgradeResult: result, channel: channel, refusedUpgrade: refused)
        }
    }

    /// Answers a refused upgrade request with the HTTP routes (the long-poll route of its path
    /// says why it was refused), then closes the connection: what follows the request on it was
    /// meant for a WebSocket.
    private func answer(_ head: HTTPRequest, on http: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        async throws
    {
        var head = head
        head.headerFields[.connection] = "close"
        let request = Request(head: head, body: .init(buffer: ByteBuffer()))
        try await http.executeThenClose { _, outbound in
            try await responder(request, ResponseWriter(outbound: outbound), http.channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.upgradeResult.get() {
            case .http(let http):
                if let refused = value.refusedUpgrade.withLockedValue({ $0 }) {
                    try await answer(refused, on: http)
                } else {
                    await handleHTTP(asyncChannel: http, logger: logger)
                }
            case .listening:
                // The handler serves it on the event loop; no task waits for it here.
                return
            }
        } catch let error as ChannelError where error == .inputClosed {
            logger.trace("The connection closed before its first request")
        } catch {
            logger.debug("A connection ended with an error", metadata: ["error": "\(error)"])
        }
    }
}
