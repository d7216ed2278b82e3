import NIOCore

/// The change messages of a layer's recent commits, oldest first, kept for the listeners that
/// receive records until they are past them; a listener that falls further behind than the log
/// reaches is told the revision only, and pulls.
struct ChangeLog {
    /// The most commits a log keeps.
    static let maximumCount = 64
    /// How many times the largest change message a log keeps in all (the newest message is always
    /// kept, whatever its size).
    static let retainedMessageSizes = 4

    private var messages: [ChangeMessage] = []
    private var byteCount = 0

    /// Adds the newest commit's message and forgets the messages every listener is past (revisions
    /// up to `oldest`), then the oldest ones beyond ``maximumCount`` or `maximumBytes`.
    mutating func append(_ message: ChangeMessage, after oldest: Int64, maximumBytes: Int) {
        if let last = messages.last, last.revision >= message.revision {
            // A layer deleted and created again (the deletion unheard, on another node) starts anew.
            messages.removeAll()
            byteCount = 0
        }
        messages.append(message)
        byteCount += message.text?.readableBytes ?? 0
        while let first = messages.first, messages.count > 1,
            first.revision <= oldest || messages.count > Self.maximumCount || byteCount > maximumBytes
        {
            byteCount -= first.text?.readableBytes ?? 0
            messages.removeFirst()
        }
    }

    /// The messages of the commits after `revision`, oldest first, whether or not the log has
    /// the commit right after it (a listener picks the ones that follow the revision it has).
    func messages(newerThan revision: Int64) -> ArraySlice<ChangeMessage> {
        let start = messages.lastIndex { $0.revision <= revision }.map { $0 + 1 } ?? messages.startIndex
        return messages[start...]
    }

    /// The messages that take a listener at `revision` on, one commit after the other, as far as
    /// the log has them; none when it does not have the commit right after `revision`.
    func messages(after revision: Int64) -> [ChangeMessage] {
        guard var index = messages.firstIndex(where: { $0.since == revision }) else { return [] }
        var chain = [messages[index]]
        while index + 1 < messages.count, messages[index + 1].since == messages[index].revision {
            index += 1
            chain.append(messages[index])
        }
        return chain
    }
}
