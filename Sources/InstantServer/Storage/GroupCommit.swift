import Foundation
import Synchronization

/// What the commits of one group transaction share: the layer as they left it, and the clients'
/// last push ids, read once for the group and then as its commits apply pushes, which the group
/// stores at its end; the records they read and write (``GroupRecords``); and what each commit
/// wrote, for the observers once the group committed.
struct GroupCommit: Sendable {
    var layer: StoredLayer
    var lastPushIDs: [ClientIdentity: Int64]
    /// The document's page count.
    let pageCount: Int
    /// The records the group's commits read and wrote.
    let records: GroupRecords
    /// What each commit that changed the layer wrote, in order.
    var changes: [LayerChangeSet] = []
    /// The push state to store at the end, one per client.
    private(set) var pushes: [StoredPush] = []

    init(layer: StoredLayer, lastPushIDs: [ClientIdentity: Int64], pageCount: Int, records: GroupRecords) {
        self.layer = layer
        self.lastPushIDs = lastPushIDs
        self.pageCount = pageCount
        self.records = records
    }

    /// Notes a push applied (or found to change nothing) at `revision`.
    mutating func record(_ push: ClientPush, revision: Int64) {
        lastPushIDs[push.client] = push.pushID
        pushes.removeAll { $0.client == push.client }
        pushes.append(StoredPush(client: push.client, pushID: push.pushID, revision: revision))
    }
}

/// The records of one layer that the commits of a write transaction read and write, kept in memory
/// while the layer is locked: nothing else writes them before the transaction ends, so a record read
/// once is not read again, and the writes of all the commits go to the database together, each
/// record as it was last written: at the end of the transaction (``takeUnflushed()``), or before,
/// in one upsert, when a read needs them there (``flush(to:documentID:layer:)``). A commit sees the
/// writes of the commits before it from here.
final class GroupRecords: Sendable {
    private struct State {
        /// The records as they are now in the transaction (read, or written since), by id, and
        /// whether the transaction wrote them.
        var records: [String: (record: StoredRecord, isWritten: Bool)] = [:]
        /// The ids looked for and not found (those written since are in ``records``, which is
        /// looked at first).
        var absent: Set<String> = []
        /// The ids of the records written that may have existed before the transaction: all but
        /// those looked for and not found.
        var rewritten: Set<String> = []
        /// The rows written since the last flush, in order; an id may come more than once when
        /// `unflushedRepeats`.
        var unflushed: [RecordRow] = []
        var unflushedRepeats = false
        /// Whether a record was written by more than one commit.
        var writtenAgain = false
    }

    private let state = Mutex(State())
    /// Whether ``flush(to:documentID:layer:)`` may write before the end of the group.
    private let flushes: Bool

    /// Records for a group that holds its layer's lock, whose reads may need its writes in the
    /// database before its end (`flushes`); or for a group that writes only at its end, which
    /// must take the lock instead when they do (``NeedsLayerLock``).
    init(flushes: Bool) {
        self.flushes = flushes
    }

    /// Thrown by ``flush(to:documentID:layer:)`` in a group that writes only at its end, when a read
    /// needs its writes in the database first: the group runs again, locking the layer.
    struct NeedsLayerLock: Error {}

    /// The records with the given ids, as far as they are known here, and the ids not known.
    func known(_ ids: [String]) -> (found: [String: StoredRecord], unknown: [String]) {
        state.withLock { state in
            var found: [String: StoredRecord] = [:]
            var unknown: [String] = []
            for id in ids {
                if let record = state.records[id]?.record {
                    found[id] = record
                } else if !state.absent.contains(id) {
                    unknown.append(id)
                }
            }
            return (found, unknown)
        }
    }

    /// Notes what a read of `ids` found.
    func remember(_ found: [StoredRecord], lookedFor ids: [String]) {
        state.withLock { state in
            // Room for all of them: a group reads the records its commits name first, and then
            // mostly writes them (those that were not found too).
            state.records.reserveCapacity(state.records.count + ids.count)
            for record in found {
                state.records[record.id, default: (record, false)].record = record
            }
            let foundIDs = Set(found.map(\.id))
            state.absent.reserveCapacity(state.absent.count + max(ids.count - found.count, 0))
            state.absent.formUnion(ids.filter { !foundIDs.contains($0) })
        }
    }

    /// Keeps rows a commit wrote, for the next flush; later reads here see them.
    func write(_ rows: [RecordRow]) {
        state.withLock { state in
            // Room asked of a dictionary comes in powers of two; the array of rows is left to grow by
            // itself, as room asked of an array is just that: a group of many small commits would copy
            // the rows kept so far at each of them.
            state.records.reserveCapacity(state.records.count + rows.count)
            for row in rows {
                let id = row.record.id
                switch state.records.updateValue((row.record, true), forKey: id) {
                case nil where !state.absent.contains(id): state.rewritten.insert(id)
                case .some(let earlier) where earlier.isWritten:
                    state.unflushedRepeats = true
                    state.writtenAgain = true
                case .some: state.rewritten.insert(id)
                case nil: break
                }
                state.unflushed.append(row)
            }
        }
    }

    /// The records written in the transaction, each as it was last written.
    func written() -> [StoredRecord] {
        state.withLock { state in state.records.values.compactMap { $0.isWritten ? $0.record : nil } }
    }

    /// Whether each record written in the transaction was written by one commit only (each commit
    /// writes a record once, as it last wrote it).
    func wroteEachRecordOnce() -> Bool {
        state.withLock { !$0.writtenAgain }
    }

    /// The ids of the records written in the transaction that may have existed before it: of
    /// ``written()``, all but those looked for and not found first.
    func rewrittenIDs() -> Set<String> {
        state.withLock(\.rewritten)
    }

    /// The rows written since the last flush, one per record as it was last written, which the
    /// caller writes to the database; the next flush starts after them.
    func takeUnflushed() -> [RecordRow] {
        state.withLock { state in
            defer {
                state.unflushed = []
                state.unflushedRepeats = false
            }
            return state.unflushedRepeats ? state.unflushed.keepingLast(by: \.record.id) : state.unflushed
        }
    }

    /// Writes the rows kept since the last flush to the database, in one upsert.
    /// - Throws: ``NeedsLayerLock`` when there are rows to write in a group that writes only at its
    ///   end.
    func flush(to transaction: any StorageTransaction, documentID: String, layer: String) async throws {
        guard flushes else {
            guard state.withLock({ $0.unflushed.isEmpty }) else { throw NeedsLayerLock() }
            return
        }
        let rows = takeUnflushed()
        guard !rows.isEmpty else { return }
        try await transaction.upsert(rows, documentID: documentID, layer: layer)
    }
}
