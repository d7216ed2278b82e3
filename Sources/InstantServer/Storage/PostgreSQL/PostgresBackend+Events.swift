import Foundation
import Logging
import PostgresNIO

/// The nodes on one PostgreSQL database talk through `NOTIFY` on the `instant_events` channel:
/// ``StorageTransaction/announce(_:)`` inside the commits, ``publish(_:)`` for the rest (presence),
/// and each node's listener of ``messages()``.
extension PostgresBackend: NodeChannel {
    /// The `NOTIFY` channel the nodes share.
    static let eventChannel = "instant_events"

    /// The payloads of a message, each within what a notification carries.
    /// - Throws: ``StorageError/Code/backendFailure`` for a message with an id too long to announce.
    static func payloads(_ message: NodeMessage) throws -> [String] {
        let payloads = message.encoded()
        if let long = payloads.first(where: { $0.utf8.count > NodeMessage.maximumEncodedSize }) {
            throw StorageError(
                .backendFailure,
                "A notification to the other server nodes would be \(long.utf8.count) bytes, and PostgreSQL "
                    + "notifications carry at most \(NodeMessage.maximumEncodedSize) here: ids, layer names and "
                    + "token ids this long cannot be announced. Use shorter ones."
            )
        }
        return payloads
    }

    /// Sends a message to every node outside any transaction.
    public func publish(_ message: NodeMessage) async throws {
        let payloads = try Self.payloads(message)
        do {
            _ = try await client.query(
                "SELECT pg_notify(\(Self.eventChannel), payload) FROM unnest(\(payloads)) AS payload", logger: logger
            ).collect()
        } catch {
            throw Self.failure(error, while: "telling the other server nodes")
        }
    }

    /// The messages every node sends, from a connection of its own that listens on the
    /// `instant_events` channel, in the order of their commits.
    ///
    /// The listener connects when the stream is made and reconnects when the connection drops
    /// (waiting 0.1 s, then twice as long after each failure, at most 5 s); it checks the
    /// connection every ``Configuration/listenerCheckInterval`` so that a silently dead network
    /// is noticed too. Each (re)connection begins with ``NodeChannelEvent/reconnected``: messages
    /// sent while it was not listening were not delivered. Ending the iteration (or cancelling its
    /// task) stops the listener and closes its connection.
    public func messages() -> AsyncStream<NodeChannelEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: NodeChannelEvent.self)
        let task = Task { [self] in
            await listen(into: continuation)
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Listens until the task is cancelled, reconnecting with backoff.
    private func listen(into continuation: AsyncStream<NodeChannelEvent>.Continuation) async {
        let initialDelay = Duration.milliseconds(100)
        var delay = initialDelay
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: configuration.connectionConfiguration(), id: 0, logger: logger)
                let watchdog = Task { await watch(connection) }
                var failure: (any Error)?
                do {
                    try await connection.listen(on: Self.eventChannel) { notifications in
                        continuation.yield(.reconnected)
                        delay = initialDelay
                        for try await notification in notifications {
                            if let message = NodeMessage(decoding: notification.payload) {
                                continuation.yield(.message(message))
                            } else {
                                logger.warning(
                                    "Ignored a notification on \(Self.eventChannel) that is not a message this server knows."
                                )
                            }
                        }
                    }
                } catch {
                    failure = error
                }
                watchdog.cancel()
                try? await connection.close()
                if let failure { throw failure }
            } catch {
                if Task.isCancelled { return }
                logger.warning(
                    "The PostgreSQL events listener lost its connection; reconnecting in \(delay).",
                    metadata: ["error": "\(Self.failure(error, while: "listening for events").message)"]
                )
            }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(5))
        }
    }

    /// Checks every ``Configuration/listenerCheckInterval`` that the connection still answers,
    /// and closes it when it does not answer within ``Configuration/healthCheckTimeout`` (which
    /// ends the listening, so that the listener reconnects).
    private func watch(_ connection: PostgresConnection) async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: configuration.listenerCheckInterval)
            } catch {
                return
            }
            let answered = try? await Self.withTimeout(configuration.healthCheckTimeout) { [logger] in
                _ = try await connection.query("SELECT 1", logger: logger).collect()
            }
            if answered == nil {
                try? await connection.close()
                return
            }
        }
    }
}
