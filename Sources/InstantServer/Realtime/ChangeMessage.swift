import Foundation
import NIOCore

/// The message of one commit on the listening WebSockets that asked for records
/// (`{"revision": M, "since": L, "records": [...]}`, docs/PROTOCOL.md), encoded once for all of
/// them: every record's JSON is written once, and a listener whose collaboration permissions hide
/// some of the records gets a copy with tombstones in their place.
struct ChangeMessage: Sendable {
    /// The layer's revision before the commit: the message is for listeners at this revision.
    let since: Int64
    /// The revision the commit took.
    let revision: Int64
    /// The message for a listener that may view every record, or `nil` when it would be larger than
    /// the limit it was encoded with (the listeners get `{"revision": M}` and pull instead).
    let text: ByteBuffer?
    /// The records without their content (what permissions and tombstones need), with where each
    /// one's JSON is in ``text``.
    private let records: [(record: StoredRecord, bytes: Range<Int>)]

    /// Encodes what a commit wrote; over `maximumSize` bytes, only its revisions are kept. The
    /// records' JSON is copied from what the answers of the commit's group share when they made it
    /// already (``LayerChangeSet/sharedRecords``), and written otherwise.
    init(_ changes: LayerChangeSet, maximumSize: Int) {
        since = changes.since
        revision = changes.revision
        var text = ByteBuffer()
        text.reserveCapacity(min(64 + StoredRecord.syncJSONSizeEstimate(of: changes.records), maximumSize + 1))
        Self.writeStart(of: changes.revision, since: changes.since, into: &text)
        var records: [(record: StoredRecord, bytes: Range<Int>)] = []
        records.reserveCapacity(changes.records.count)
        func bare(_ record: StoredRecord) -> StoredRecord {
            var bare = record
            bare.content = Data()
            return bare
        }
        var fits = true
        if let (json, range) = Self.sharedJSON(of: changes) {
            // Over the limit (with the closing `]}`), nothing is copied.
            if let places = json.copy(range, into: &text, upTo: maximumSize - 2) {
                for (record, bytes) in zip(changes.records, places) { records.append((bare(record), bytes)) }
            } else {
                fits = false
            }
        } else {
            var scratch: [UInt8] = []
            for record in changes.records {
                if !records.isEmpty { text.writeInteger(UInt8(ascii: ",")) }
                let start = text.writerIndex
                record.writeSyncJSON(into: &text, using: &scratch)
                records.append((bare(record), start..<text.writerIndex))
                if text.readableBytes > maximumSize { break }
            }
        }
        text.writeString("]}")
        if !fits || text.readableBytes > maximumSize {
            self.text = nil
            self.records = []
        } else {
            self.text = text
            self.records = records
        }
    }

    /// The revisions of a commit without its records, as a commit too large to send: for a layer
    /// none of whose listeners receives records (one that starts to before the message is kept is
    /// told the revision, and pulls).
    init(revisionsOf changes: LayerChangeSet) {
        since = changes.since
        revision = changes.revision
        text = nil
        records = []
    }

    /// The message as the token's user may see it (records it may not view as tombstones), or `nil`
    /// when the commit was too large to send.
    func text(for token: ClientToken) -> ByteBuffer? {
        guard let text, token.collaborationPermissions != nil else { return text }
        let shown = records.map { InstantAPI.visible($0.record, to: token) }
        guard zip(shown, records).contains(where: { $0.isDeleted != $1.record.isDeleted }) else { return text }
        var copy = ByteBuffer()
        var scratch: [UInt8] = []
        Self.writeStart(of: revision, since: since, into: &copy)
        for (index, (visible, original)) in zip(shown, records).enumerated() {
            if index > 0 { copy.writeInteger(UInt8(ascii: ",")) }
            if visible.isDeleted != original.record.isDeleted {
                visible.writeSyncJSON(into: &copy, using: &scratch)
            } else {
                copy.writeImmutableBuffer(text.getSlice(at: original.bytes.lowerBound, length: original.bytes.count)!)
            }
        }
        copy.writeString("]}")
        return copy
    }

    /// The JSON that the answers of the commit's group made of the records they share, and where
    /// the commit's records are among those, when it is made and has them all, as they are.
    static func sharedJSON(of changes: LayerChangeSet) -> (json: SharedSyncJSON, range: Range<Int>)? {
        guard let shared = changes.sharedRecords, shared.hasDerived(SharedSyncJSON.self) else { return nil }
        // The shared records are by revision then id, and so are the commit's (all of one revision,
        // the one after `since`).
        let all = shared.records
        let first = shared.index(after: changes.since)
        let range = first..<first + changes.records.count
        guard range.upperBound <= all.endIndex, all[range].elementsEqual(changes.records),
            range.upperBound == all.endIndex || all[range.upperBound].revision != changes.revision
        else { return nil }
        return (shared.derived(SharedSyncJSON.self), range)
    }

    /// `{"revision":M,"since":L,"records":[`
    private static func writeStart(of revision: Int64, since: Int64, into buffer: inout ByteBuffer) {
        buffer.writeString(#"{"revision":\#(revision),"since":\#(since),"records":["#)
    }
}
