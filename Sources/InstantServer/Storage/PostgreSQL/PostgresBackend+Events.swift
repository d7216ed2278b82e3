import Foundation
import Logging
import PostgresNIO

extension PostgresBackend {
    /// What ``events()`` delivers.
    public enum ListenerEvent: Sendable, Hashable {
        /// The listener is connected and listening (first, and again after each reconnection).
        /// Changes committed while it was not listening were not delivered: re-read what you
        /// watch (for example, the revisions of the layers that have listeners).
        case listening
        /// A change committed by some node (this one included).
        case event(StorageEvent)
    }

    /// The `NOTIFY` channel of ``StorageTransaction/announce(_:)``.
    static let eventChannel = "instant_events"

    /// The events every node announces, from a connection of their own that listens on the
    /// `instant_events` channel, in the order of their commits.
    ///
    /// The listener connects when the stream is made and reconnects when the connection drops
    /// (waiting 0.1 s, then twice as long after each failure, at most 5 s); it checks the
    /// connection every ``Configuration/listenerCheckInterval`` so that a silently dead network
    /// is noticed too. Each (re)connection begins with ``ListenerEvent/listening``. Ending the
    /// iteration (or cancelling its task) stops the listener and closes its connection.
    public func events() -> AsyncStream<ListenerEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ListenerEvent.self)
        let task = Task { [self] in
            await listen(into: continuation)
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Listens until the task is cancelled, reconnecting with backoff.
    private func listen(into continuation: AsyncStream<ListenerEvent>.Continuation) async {
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
                        continuation.yield(.listening)
                        delay = initialDelay
                        for try await notification in notifications {
                            if let event = decodeEvent(notification.payload) { continuation.yield(.event(event)) }
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
            if answered != true {
                try? await connection.close()
                return
            }
        }
    }

    /// The event of a notification's payload; `nil` (and a warning) for one this node does not
    /// understand, from a newer node for example.
    private func decodeEvent(_ payload: String) -> StorageEvent? {
        guard let decoded = try? JSONDecoder().decode(EventPayload.self, from: Data(payload.utf8)),
            let event = decoded.event
        else {
            logger.warning("Ignored a notification on \(Self.eventChannel) that is not an event this server knows.")
            return nil
        }
        return event
    }
}

/// The JSON of one notification on `instant_events`: `{"e":"revision","d":…,"l":…,"r":…}`,
/// `{"e":"layerRemoved","d":…,"l":…}` or `{"e":"tokensRevoked","t":[…]}`.
struct EventPayload: Codable, Sendable {
    /// The kind of event.
    var kind: String
    /// The document id.
    var documentID: String?
    /// The layer name.
    var layer: String?
    /// The revision of the layer.
    var revision: Int64?
    /// Revoked token ids.
    var tokenIDs: [String]?

    enum CodingKeys: String, CodingKey {
        case kind = "e"
        case documentID = "d"
        case layer = "l"
        case revision = "r"
        case tokenIDs = "t"
    }

    /// PostgreSQL's limit on the payload of a notification: shorter than 8000 bytes.
    static let maximumSize = 7_999

    /// The payloads of an event: one, or for many token ids, as many as keep each under
    /// ``maximumSize``.
    /// - Throws: ``StorageError/Code/backendFailure`` for a single id or name too long for a payload.
    static func payloads(for event: StorageEvent) throws -> [String] {
        let encoder = JSONEncoder()
        func encoded(_ payload: EventPayload) throws -> String {
            let text = String(decoding: try encoder.encode(payload), as: UTF8.self)
            guard text.utf8.count <= maximumSize else {
                throw StorageError(
                    .backendFailure,
                    "An event is \(text.utf8.count) bytes in JSON, and PostgreSQL notifications carry at most "
                        + "\(maximumSize): ids, layer names and token ids this long cannot be announced to the other "
                        + "server nodes. Use shorter ones."
                )
            }
            return text
        }
        switch event {
        case .revisionChanged(let documentID, let layer, let revision):
            return [
                try encoded(EventPayload(kind: "revision", documentID: documentID, layer: layer, revision: revision))
            ]
        case .layerRemoved(let documentID, let layer):
            return [try encoded(EventPayload(kind: "layerRemoved", documentID: documentID, layer: layer))]
        case .tokensRevoked(let ids):
            // Each id costs its JSON string and a comma; fill each payload up to the limit.
            let empty = try encoded(EventPayload(kind: "tokensRevoked", tokenIDs: [])).utf8.count
            var batches: [[String]] = []
            var batch: [String] = []
            var size = empty
            for id in ids {
                let cost = try encoder.encode(id).count
                if !batch.isEmpty, size + 1 + cost > maximumSize {
                    batches.append(batch)
                    batch = []
                    size = empty
                }
                size += cost + (batch.isEmpty ? 0 : 1)
                batch.append(id)
            }
            if !batch.isEmpty { batches.append(batch) }
            return try batches.map { try encoded(EventPayload(kind: "tokensRevoked", tokenIDs: $0)) }
        }
    }

    /// The event, or `nil` for a kind this server does not know or a payload that misses a field.
    var event: StorageEvent? {
        switch kind {
        case "revision":
            guard let documentID, let layer, let revision else { return nil }
            return .revisionChanged(documentID: documentID, layer: layer, revision: revision)
        case "layerRemoved":
            guard let documentID, let layer else { return nil }
            return .layerRemoved(documentID: documentID, layer: layer)
        case "tokensRevoked":
            guard let tokenIDs else { return nil }
            return .tokensRevoked(tokenIDs)
        default:
            return nil
        }
    }
}
