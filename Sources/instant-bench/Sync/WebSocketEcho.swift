import Foundation
import Hummingbird
import HummingbirdWSClient
import HummingbirdWebSocket
import Logging
import ServiceLifecycle

/// The physical floor of propagation: round trips of a small text message over a raw WebSocket
/// on loopback, to an echo server in this process.
enum WebSocketEcho {
    static func roundTrips(count: Int) async throws -> Percentiles {
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.ws("echo") { inbound, outbound, _ in
            for try await message in inbound.messages(maxSize: 1 << 16) {
                if case .text(let text) = message { try await outbound.writeTextMessage(text) }
            }
        }
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "bench.echo")
        logger.logLevel = .error
        let app = Application(
            router: router,
            server: .http1WebSocketUpgrade(webSocketRouter: router),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) },
            logger: logger
        )
        // Shut down gracefully once measured: cancelling the server while the echo connection
        // closes makes Hummingbird log the connection's cancellation as an error.
        let services = ServiceGroup(services: [app], gracefulShutdownSignals: [], logger: logger)
        let serverTask = Task { try await services.run() }
        do {
            var port = 0
            for await value in ports {
                port = value
                break
            }
            try await echo(count: count, port: port, logger: logger)
        } catch {
            await services.triggerGracefulShutdown()
            _ = try? await serverTask.value
            throw error
        }
        await services.triggerGracefulShutdown()
        try await serverTask.value
        return Percentiles(await Measurements.shared.take())
    }

    /// Sends `count` messages (after 100 to warm up) to the echo server on `port`, each once the
    /// one before came back, and keeps their round trips in ``Measurements``.
    private static func echo(count: Int, port: Int, logger: Logger) async throws {
        _ = try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)/echo", logger: logger) {
            inbound, outbound, _ in
            var replies = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
            var samples: [Double] = []
            for index in 0..<(count + 100) {
                let start = DispatchTime.now().uptimeNanoseconds
                try await outbound.writeTextMessage(#"{"revision":\#(index)}"#)
                _ = try await replies.next()
                if index >= 100 { samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6) }
            }
            await Measurements.shared.store(samples)
            try await outbound.close(.normalClosure, reason: nil)
        }
    }
}

/// Hands samples out of a WebSocket handler, which cannot return a value.
actor Measurements {
    static let shared = Measurements()
    private var samples: [Double] = []
    func store(_ values: [Double]) { samples = values }
    func take() -> [Double] {
        defer { samples = [] }
        return samples
    }
}
