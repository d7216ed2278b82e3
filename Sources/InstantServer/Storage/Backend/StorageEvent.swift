/// A committed change that listeners care about. Events only name what changed; the records a
/// commit wrote come with it as a ``LayerChangeSet``, to the observers of the node that made it.
public enum StorageEvent: Sendable, Hashable {
    /// A layer reached a new revision (records changed, or the layer was created).
    case revisionChanged(documentID: String, layer: String, revision: Int64)
    /// A layer was deleted, alone or with its document.
    case layerRemoved(documentID: String, layer: String)
    /// Token ids (`jti`) were revoked.
    case tokensRevoked([String])
}

/// What one commit wrote to a layer: the records as stored, each carrying the commit's revision.
public struct LayerChangeSet: Sendable, Hashable {
    /// The document of the layer.
    public var documentID: String
    /// The layer's name.
    public var layer: String
    /// The layer's revision before the commit.
    public var since: Int64
    /// The revision the commit took (`since + 1`).
    public var revision: Int64
    /// Every record the commit wrote (tombstones for deletions), as it was last written, by id.
    public var records: [StoredRecord]
    /// Records that hold these (by revision then id) among others, shared by the answers of the
    /// commit's group, with what they derived from them (their JSON, which the change messages of
    /// the commit take rather than write again); `nil` when there are none (a commit that another
    /// node made, for one). Not part of the change set's value.
    var sharedRecords: SharedRecords?

    /// Creates a change set.
    public init(documentID: String, layer: String, since: Int64, revision: Int64, records: [StoredRecord]) {
        self.documentID = documentID
        self.layer = layer
        self.since = since
        self.revision = revision
        self.records = records
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        (lhs.documentID, lhs.layer, lhs.since, lhs.revision) == (rhs.documentID, rhs.layer, rhs.since, rhs.revision)
            && lhs.records == rhs.records
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(documentID)
        hasher.combine(layer)
        hasher.combine(since)
        hasher.combine(revision)
        hasher.combine(records)
    }
}

/// Receives the events of every transaction that ``InstantStorage`` committed, after the commit, in
/// the order of the commits made through one storage.
public protocol StorageObserver: Sendable {
    /// Called after a transaction that wrote records committed, with what each of its commits
    /// wrote, in the order of their revisions; ``storageCommitted(_:)`` follows with its events.
    func recordsCommitted(_ changes: [LayerChangeSet]) async

    /// Called after a transaction with these events committed.
    func storageCommitted(_ events: [StorageEvent]) async

    /// Called after each group transaction of a layer committed, once its commits' callers were
    /// answered, with how the group went. Synchronous: an observer records it and returns.
    func groupCommitted(_ report: GroupCommitReport)
}

extension StorageObserver {
    /// Observers that do not follow the group transactions ignore them.
    public func groupCommitted(_ report: GroupCommitReport) {}
}

/// How one group transaction of a layer went: the commits to the layer that arrived while the one
/// before was under way, made in one transaction (``InstantStorage``'s group commit).
public struct GroupCommitReport: Sendable, Hashable {
    /// How a group makes sure that it sees the layer as the last writer left it.
    public enum Path: String, Sendable, Hashable, CaseIterable {
        /// It locked the layer's row first (the first group of a node on a layer, the groups after
        /// one that found another node's write, and every group on SQLite).
        case locked
        /// It went by what the node remembered of the layer, checked by its write.
        case remembered
        /// It read the layer with everything else in one statement, then wrote if nobody had
        /// written since.
        case readFirst = "read_first"
    }

    /// The path of the transaction that committed the group.
    public var path: Path
    /// The commits in the group (pushes and REST writes).
    public var commits: Int
    /// Whether a transaction that did not lock the layer found that another node wrote it
    /// meanwhile, and the group ran again.
    public var ranAgain: Bool
    /// From the group's start to its commit, waiting for the layer's lock included.
    public var duration: Duration

    public init(path: Path, commits: Int, ranAgain: Bool, duration: Duration) {
        self.path = path
        self.commits = commits
        self.ranAgain = ranAgain
        self.duration = duration
    }
}
