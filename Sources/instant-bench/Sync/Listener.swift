import Foundation
import HummingbirdWSClient
import InstantJSON
import Logging

/// A benchmark client listening on a layer's WebSocket, reporting what it receives.
struct Listener {
    let stop: AsyncStream<Void>.Continuation
    let task: Task<Void, Never>

    /// Connects listener number `index`; `onMessage` gets every message with its arrival time.
    init(
        url: String,
        onMessage: @escaping @Sendable (JSONValue, UInt64) async -> Void,
        onFailure: @escaping @Sendable (any Error) async -> Void
    ) {
        let (stops, stop) = AsyncStream<Void>.makeStream()
        self.stop = stop
        task = Task {
            var logger = Logger(label: "bench.listener")
            logger.logLevel = .critical
            do {
                try await WebSocketClient.connect(url: url, logger: logger) { inbound, outbound, _ in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for try await message in inbound.messages(maxSize: 1 << 20) {
                                let now = DispatchTime.now().uptimeNanoseconds
                                if case .text(let text) = message, let value = try? JSONValue(parsing: text) {
                                    await onMessage(value, now)
                                }
                            }
                        }
                        group.addTask {
                            for await _ in stops { break }
                            try await outbound.close(.normalClosure, reason: nil)
                        }
                        try await group.next()
                        group.cancelAll()
                    }
                }
            } catch {
                await onFailure(error)
            }
        }
    }

    /// Closes the connection and waits for it to end.
    func close() async {
        stop.yield()
        await task.value
    }
}
