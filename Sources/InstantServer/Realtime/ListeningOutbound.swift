import HummingbirdWebSocket
import NIOConcurrencyHelpers
import NIOCore
import NIOWebSocket

/// The sending side of a listening WebSocket, shared by the task that announces changes and the
/// one that answers sync requests: messages go out whole and one after the other (a message longer
/// than a frame is never interleaved with another), and each send decides what to write from the
/// revision the client was last told, which it may move on.
///
/// The revision told is what the next change message must start from (its `since`): an answer to a
/// sync request on the socket brings the client to the answer's revision, so the change messages
/// after it continue from there.
final class ListeningOutbound: Sendable {
    private struct State {
        /// The revision the client was last told, by a change message, a revision or an answer.
        var told: Int64
        /// Whether a send is writing.
        var isSending = false
        /// The sends waiting for the one writing, in order.
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let writer: WebSocketOutboundWriter
    private let state: NIOLockedValueBox<State>

    /// A client that has revision `since`.
    init(_ writer: WebSocketOutboundWriter, since: Int64) {
        self.writer = writer
        state = NIOLockedValueBox(State(told: since))
    }

    /// The revision the client was last told.
    var told: Int64 { state.withLockedValue(\.told) }

    /// Waits for the sends before it, then writes the messages `decide` returns, in order. `decide`
    /// runs once it is this send's turn, with the revision told, which it updates to what the
    /// messages tell.
    func send(deciding decide: (inout Int64) throws -> [ByteBuffer]) async throws {
        await takeTurn()
        defer { passTurn() }
        let messages = try state.withLockedValue { try decide(&$0.told) }
        for message in messages {
            try await Self.writeText(message, to: writer)
        }
    }

    private func takeTurn() async {
        await withCheckedContinuation { continuation in
            let isFree = state.withLockedValue { state in
                guard state.isSending else {
                    state.isSending = true
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if isFree { continuation.resume() }
        }
    }

    private func passTurn() {
        let next = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.isSending = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }

    /// The largest frame of a message on the listening WebSocket: a longer message goes out in
    /// several frames, which WebSocket clients put together again.
    static let frameSize = 16_384

    /// Sends a text message that is already UTF-8, in frames of at most ``frameSize``.
    private static func writeText(_ text: ByteBuffer, to writer: WebSocketOutboundWriter) async throws {
        var rest = text
        var opcode = WebSocketOpcode.text
        while rest.readableBytes > frameSize, let frame = rest.readSlice(length: frameSize) {
            try await writer.write(.custom(WebSocketFrame(fin: false, opcode: opcode, data: frame)))
            opcode = .continuation
        }
        try await writer.write(.custom(WebSocketFrame(fin: true, opcode: opcode, data: rest)))
    }
}
