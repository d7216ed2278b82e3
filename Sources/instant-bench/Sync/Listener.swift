import Foundation
import HummingbirdWSClient
import InstantJSON
import Logging

/// A benchmark client listening on a layer's WebSocket, reporting what it receives; it may send
/// sync requests on it.
struct Listener {
    private enum Outgoing {
        case text(String)
        case close
    }

    private let outgoing: AsyncStream<Outgoing>.Continuation
    let task: Task<Void, Never>

    /// Connects to `url`; `onMessage` gets every text message that is JSON, parsed, with its
    /// arrival time.
    init(
        url: String,
        onMessage: @escaping @Sendable (JSONValue, UInt64) async -> Void,
        onFailure: @escaping @Sendable (any Error) async -> Void
    ) {
        self.init(
            url: url,
            onText: { text, time in
                if let value = try? JSONValue(parsing: text) { await onMessage(value, time) }
            },
            onFailure: onFailure)
    }

    /// Connects to `url`; `onText` gets every text message as it came, with its arrival time.
    init(
        url: String,
        onText: @escaping @Sendable (String, UInt64) async -> Void,
        onFailure: @escaping @Sendable (any Error) async -> Void
    ) {
        let (sends, outgoing) = AsyncStream<Outgoing>.makeStream()
        self.outgoing = outgoing
        task = Task {
            var logger = Logger(label: "bench.listener")
            logger.logLevel = .critical
            do {
                try await WebSocketClient.connect(url: url, logger: logger) { inbound, outbound, _ in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for try await message in inbound.messages(maxSize: 1 << 20) {
                                let now = DispatchTime.now().uptimeNanoseconds
                                if case .text(let text) = message { await onText(text, now) }
                            }
                        }
                        group.addTask {
                            for await send in sends {
                                switch send {
                                case .text(let text): try await outbound.write(.text(text))
                                case .close:
                                    try await outbound.close(.normalClosure, reason: nil)
                                    return
                                }
                            }
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

    /// Sends a text message.
    func send(_ text: String) {
        outgoing.yield(.text(text))
    }

    /// Starts closing the connection.
    func stop() {
        outgoing.yield(.close)
    }

    /// Closes the connection and waits for it to end.
    func close() async {
        stop()
        await task.value
    }
}
