/// What a node keeps of a layer after its last group transaction there, so that the next group on
/// the layer reads less from the database: the records changed in the layer's last revisions (what
/// the answers of the next group's commits carry) and the last push ids of the clients seen.
///
/// It holds only while the layer's row still has the version that group wrote
/// (``LockedLayer/version``): then nothing else wrote the layer since, on this node or another,
/// and the group's transaction committed (a transaction that failed left the version before).
/// A locked group checks that once it has the lock (``holds(for:)``); a group that does not lock
/// plans its read on the memory's word and checks it against what it read, or, when the memory
/// has all it needs, reads nothing and writes only if the row still has that version
/// (``GroupReadPlan/withoutReading(_:documentID:layer:)``).
struct LayerMemory: Sendable {
    /// The version of the layer's row the group wrote.
    var version: String
    /// The layer's revision the group left.
    var revision: Int64
    /// The document's page count.
    var pageCount: Int
    /// The records changed after `changes.after`, up to `revision`; `nil` when not known.
    var changes: ChangedRecords?
    /// The last push ids of the clients known here; `nil` for a client known to have none.
    var pushIDs: [ClientIdentity: Int64?]
    /// Whether the records the group's commits named were all among the changes it knew (or
    /// absent): when its pushes named older records (a form's fields filled, old annotations
    /// edited), the next group reads before it writes rather than take the records its memory
    /// lacks as absent (``GroupReadPlan/withoutReading(_:documentID:layer:)``), which would most
    /// likely cost it a refused write.
    var namedOnlyKnownRecords: Bool
    /// About how many bytes the memory takes.
    let byteCount: Int

    /// How many of the layer's last revisions the memory keeps the changes of: a client further
    /// behind than the answers of a group transaction cover is answered after the commit anyway.
    static let maximumRevisions: Int64 = 64
    /// How many bytes of records a layer's memory keeps at most, in whole revisions from the newest.
    static let maximumBytes = 1 << 20
    /// How many clients' push ids a layer's memory keeps at most.
    static let maximumClients = 1_024
    /// About what a record or a client costs besides its content.
    static let recordOverhead = 160

    /// The memory of a group that left the layer at `revision` having read or written the records
    /// changed after `changes.after` (when known) and the push ids in `pushIDs`, and whose commits
    /// named only records among the changes it knew, or absent ones (`namedOnlyKnownRecords`);
    /// `version` is set once the group wrote the layer's row.
    init(
        revision: Int64, pageCount: Int, changes: ChangedRecords?, pushIDs: [ClientIdentity: Int64?],
        namedOnlyKnownRecords: Bool
    ) {
        self.version = ""
        self.revision = revision
        self.pageCount = pageCount
        self.namedOnlyKnownRecords = namedOnlyKnownRecords
        let kept = changes?.keeping(revisionsAfter: revision - Self.maximumRevisions, bytes: Self.maximumBytes)
        self.changes = kept?.changes
        self.pushIDs = pushIDs.count > Self.maximumClients ? [:] : pushIDs
        byteCount = (kept?.bytes ?? 0) + self.pushIDs.count * Self.recordOverhead
    }

    /// Whether the layer, as locked, is as the group that made the memory left it.
    func holds(for locked: LockedLayer) -> Bool {
        !version.isEmpty && locked.version == version && locked.layer.revision == revision
    }

    /// The clients of `clients` whose last push ids are not known here.
    func unknown(_ clients: [ClientIdentity]) -> [ClientIdentity] {
        clients.filter { pushIDs.index(forKey: $0) == nil }
    }

    /// The changes known here, when they reach back to `revision` (or when no revision is asked):
    /// a group's answers need the records changed after the lowest base revision among them.
    func changes(reachingBackTo revision: Int64?) -> ChangedRecords? {
        guard let changes else { return nil }
        guard let revision else { return changes }
        return changes.after <= revision ? changes : nil
    }

    /// The push ids known here of `clients`, added to those read (clients without one are absent).
    func adding(to read: [ClientIdentity: Int64], of clients: [ClientIdentity]) -> [ClientIdentity: Int64] {
        var all = read
        for client in clients {
            if let known = pushIDs[client], let pushID = known { all[client] = pushID }
        }
        return all
    }
}

extension ChangedRecords {
    /// The changes of the revisions after `floor` (when after ``after``), from the newest back in
    /// whole revisions while they fit in `bytes` (their contents, and an allowance for each record,
    /// so that tombstones count too); and the bytes they count.
    ///
    /// When all of them are kept, they carry these records (``SharedRecords/Carried``): the next
    /// group's answers extend the JSON that this group's answers make of them instead of making it
    /// again. They then hold that JSON too, which counts as many bytes again. Otherwise they are
    /// records of their own, without what the readers derived from these.
    func keeping(revisionsAfter floor: Int64, bytes maximum: Int) -> (changes: ChangedRecords, bytes: Int) {
        let records = shared.records
        var after = max(self.after, floor)
        var start = records.endIndex
        var bytes = 0
        while start > records.startIndex {
            let revision = records[start - 1].revision
            guard revision > after else { break }
            var first = start
            var revisionBytes = 0
            while first > records.startIndex, records[first - 1].revision == revision {
                first -= 1
                revisionBytes += records[first].content.count + LayerMemory.recordOverhead
            }
            guard bytes + revisionBytes <= maximum else {
                after = revision
                break
            }
            bytes += revisionBytes
            start = first
        }
        guard start == records.startIndex else {
            return (ChangedRecords(after: after, records: Array(records[start...])), bytes)
        }
        let all = SharedRecords.Carried(source: shared, offset: 0, count: records.count)
        return (ChangedRecords(after: after, records: records, carrying: all), 2 * bytes)
    }
}

/// What a group transaction reads from the database, given what the node remembers of the layer
/// (when the memory holds): the records its commits name, the last push ids of the clients the
/// memory does not know, and the changes its answers need unless the memory reaches back to them.
struct GroupReadPlan {
    /// The memory the plan relies on (checked before, or, by a group that does not lock, after).
    let memory: LayerMemory?
    /// The clients of the group's pushes.
    let clients: [ClientIdentity]
    /// The changes the memory has for the answers.
    let knownChanges: ChangedRecords?
    /// The lowest revision the answers ask the changes after, if any.
    let changesAfter: Int64?

    init(remembering memory: LayerMemory?, clients: [ClientIdentity], changesAfter: Int64?) {
        self.memory = memory
        self.clients = clients
        self.changesAfter = changesAfter
        knownChanges = memory?.changes(reachingBackTo: changesAfter)
    }

    /// The clients whose last push ids the group reads.
    var clientsToRead: [ClientIdentity] { memory?.unknown(clients) ?? clients }

    /// The revision after which the group reads the changed records, if it does.
    var changedAfterToRead: Int64? { knownChanges == nil ? changesAfter : nil }

    /// The revision after which the group knows every changed record once `read` is completed.
    var changedSince: Int64? { knownChanges?.after ?? changesAfter }

    /// The layer and the records with the given ids as the memory has them, when the group needs
    /// to read nothing else (the memory knows every client's last push id and reaches back to the
    /// changes the answers need, and its version is set) and the group before it named only
    /// records it knew or absent ones; `nil` otherwise.
    ///
    /// The records the memory's changes do not have were not changed since: they are either
    /// absent or older. The group takes them as absent (`assumedAbsent`), and its write applies
    /// only if the layer's row still has the memory's version and none of them exists
    /// (``OptimisticTransaction/finishCommits(documentID:layer:writing:revision:pushes:announcing:ifUnchangedSince:assumingAbsent:)``);
    /// when one does, the group reads and runs again. So a group of pushes that create records,
    /// or change records changed lately, is one statement.
    func withoutReading(_ ids: [String], documentID: String, layer: String) -> (
        snapshot: LayerSnapshot, assumedAbsent: [String]
    )? {
        guard let memory, let changes = memory.changes, !memory.version.isEmpty, memory.namedOnlyKnownRecords,
            clientsToRead.isEmpty, changedAfterToRead == nil
        else { return nil }
        var found: [String: StoredRecord] = [:]
        let named = Set(ids)
        for record in changes.shared.records where named.contains(record.id) { found[record.id] = record }
        let snapshot = LayerSnapshot(
            layer: StoredLayer(documentID: documentID, name: layer, revision: memory.revision),
            pageCount: memory.pageCount, version: memory.version,
            reads: GroupReads(records: Array(found.values), lastPushIDs: [:], changed: []))
        return (snapshot, ids.filter { found[$0] == nil })
    }

    /// What the group read, with what the memory adds.
    func completing(_ read: GroupReads) -> GroupReads {
        guard let memory else { return read }
        var completed = read
        completed.lastPushIDs = memory.adding(to: read.lastPushIDs, of: clients)
        if let knownChanges { completed.changed = knownChanges.shared.records }
        return completed
    }
}
