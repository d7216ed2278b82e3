import NIOCore

/// The bytes of a sync answer as parts: the text written for the answer, and, within it, the JSON
/// that the answers of its group share (``SharedSyncJSON``), taken as it is rather than copied.
///
/// The answer to a 100-change push carries about a thousand records, most of them in the shared
/// JSON: the parts go out one after the other (over HTTP as parts of the body, on a WebSocket as
/// frames of the message), and the shared bytes are never copied into the answer. Only an answer
/// that Hummingbird's router makes takes them in one buffer (``joined()``). An answer waiting to go
/// out keeps the buffers its parts are slices of.
struct SyncAnswerBody: Sendable {
    /// The parts before ``text``, in order.
    private var parts: [ByteBuffer] = []
    /// The part being written, after the others.
    var text: ByteBuffer

    /// A body that starts with `text`.
    init(_ text: ByteBuffer = ByteBuffer()) {
        self.text = text
    }

    /// Adds bytes that other answers share, as they are; what is written next goes after them.
    mutating func append(shared bytes: ByteBuffer) {
        if text.readableBytes > 0 {
            parts.append(text)
            text = ByteBuffer()
        }
        parts.append(bytes)
    }

    /// The parts in order, none of them empty unless the body is.
    var buffers: [ByteBuffer] {
        text.readableBytes > 0 || parts.isEmpty ? parts + [text] : parts
    }

    /// The length of the body.
    var readableBytes: Int {
        parts.reduce(text.readableBytes) { $0 + $1.readableBytes }
    }

    /// The body in one buffer (the parts copied into it, unless there is one).
    func joined() -> ByteBuffer {
        guard !parts.isEmpty else { return text }
        var joined = ByteBuffer()
        joined.reserveCapacity(readableBytes)
        for part in buffers { joined.writeImmutableBuffer(part) }
        return joined
    }
}
