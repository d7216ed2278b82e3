import Foundation
import InstantJSON
import Synchronization

/// What the server announces on a layer's listening connection (docs/PROTOCOL.md, "Listening for
/// changes").
enum ListenMessage: Sendable {
    /// Commit `revision` wrote `answer`'s records, and the connection was at `since` before it.
    /// `answer` is what a sync answer with base revision `since` would hold for that commit.
    case changes(since: Int64, answer: SyncAnswer)
    /// The layer has reached this revision (the records are to be pulled).
    case revision(Int64)
    /// The users listening on the layer changed (the server sends it first once the listener is
    /// registered); the SDK does not show them.
    case presence

    /// The message in `value`, or `nil` for messages the SDK does not know.
    init?(_ value: JSONValue) throws(InstantError) {
        if value["presence"]?.arrayValue != nil {
            self = .presence
            return
        }
        guard let revision = value["revision"]?.intValue else { return nil }
        if let since = value["since"]?.intValue, value["records"] != nil {
            self = .changes(since: Int64(since), answer: try SyncAnswer(value))
        } else {
            self = .revision(Int64(revision))
        }
    }
}

/// An open listening WebSocket, as the SDK sends sync requests on it: each request goes out with
/// a request id and waits for the answer with that id (docs/PROTOCOL.md, "Sync requests on the
/// WebSocket").
///
/// The transport writes ``outgoing`` to the socket, hands it every message that carries a
/// `requestId` (``receivedAnswer(_:)``), and closes it when the connection ends, which fails the
/// requests still waiting with ``InstantError/Code/couldNotReachServer``: the caller sends them
/// again over HTTP (the same `pushId`, so a push that was applied is not applied twice).
final class ListeningSocket: Sendable {
    private struct State {
        var nextRequestID = 1
        var waiting: [String: CheckedContinuation<JSONValue, any Error>] = [:]
        var isClosed = false
    }

    private let state = Mutex(State())
    /// The text messages to send, in order.
    let outgoing: AsyncStream<String>
    private let outgoingContinuation: AsyncStream<String>.Continuation

    init() {
        (outgoing, outgoingContinuation) = AsyncStream.makeStream()
    }

    /// Whether the connection ended.
    var isClosed: Bool { state.withLock { $0.isClosed } }

    /// Sends a sync request (the body of `POST …/sync`) and returns the server's answer.
    /// - Throws: ``InstantError/Code/couldNotReachServer`` when the connection ends first; the
    ///   error the server answered with (by its HTTP status); ``InstantError/Code/cancelled``.
    func sync(_ body: JSONValue) async throws(InstantError) -> SyncAnswer {
        let id = state.withLock { state in
            defer { state.nextRequestID += 1 }
            return String(state.nextRequestID)
        }
        let message: JSONValue
        do {
            message = try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<JSONValue, any Error>) in
                    let sent = state.withLock { state in
                        guard !state.isClosed else { return false }
                        state.waiting[id] = continuation
                        return true
                    }
                    guard sent else { return continuation.resume(throwing: Self.closedError) }
                    let request = JSONValue.object(["requestId": .string(id), "sync": body])
                    outgoingContinuation.yield(String(decoding: request.serialized(), as: UTF8.self))
                }
            } onCancel: {
                let waiting = state.withLock { $0.waiting.removeValue(forKey: id) }
                waiting?.resume(throwing: CancellationError())
            }
        } catch let error as InstantError {
            throw error
        } catch {
            throw InstantError(.cancelled, "The request was cancelled.")
        }
        if let answer = message["answer"] { return try SyncAnswer(answer) }
        let status = message["error"]?["status"]?.intValue ?? 0
        let reason = message["error"]?["reason"]?.stringValue ?? "status \(status)"
        throw InstantError(status: status, reason: reason)
    }

    /// Hands over a message with a `requestId`: the answer of the request with that id.
    func receivedAnswer(_ message: JSONValue) {
        guard let id = message["requestId"]?.stringValue else { return }
        let waiting = state.withLock { $0.waiting.removeValue(forKey: id) }
        waiting?.resume(returning: message)
    }

    /// The connection ended: fails every waiting request and stops sending.
    func close() {
        let waiting = state.withLock { state in
            state.isClosed = true
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        outgoingContinuation.finish()
        for continuation in waiting { continuation.resume(throwing: Self.closedError) }
    }

    private static var closedError: InstantError {
        InstantError(
            .couldNotReachServer, "The listening connection closed before the server answered; send the request again.")
    }
}
