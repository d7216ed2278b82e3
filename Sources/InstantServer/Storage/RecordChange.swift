/// A condition a change requires of the record's current state, checked inside the write transaction.
public enum RecordCondition: Sendable, Hashable {
    /// No requirement.
    case none
    /// The record must exist and not be deleted.
    case exists
    /// The record must not exist, or exist only as a tombstone.
    case absent
    /// The record must not have been deleted after the given revision (a put on a record deleted
    /// since then is refused: delete wins).
    case notDeletedAfter(Int64)
}

/// What to do with a whole batch when one change's condition fails.
public enum ConditionFailurePolicy: Sendable, Hashable {
    /// Roll back the whole batch and throw ``StorageError`` (nothing is written).
    case abortBatch
    /// Skip the failed change, report it in ``CommitResult/skipped`` and apply the others.
    case skipChange
}

/// One change to a record of a layer.
public struct RecordChange: Sendable, Hashable {
    /// What the change does.
    public enum Operation: Sendable, Hashable {
        /// Create or replace the record.
        case put(RecordWrite)
        /// Delete the record (leaves a tombstone), on behalf of the given user.
        case delete(id: String, user: String?)
    }

    /// What the change does.
    public var operation: Operation
    /// The condition checked before applying the change.
    public var condition: RecordCondition

    /// Creates a change.
    public init(_ operation: Operation, condition: RecordCondition = .none) {
        self.operation = operation
        self.condition = condition
    }

    /// The id of the record the change is about.
    public var recordID: String {
        switch operation {
        case .put(let write): write.id
        case .delete(let id, _): id
        }
    }

    /// Creates or replaces a record.
    public static func put(_ write: RecordWrite, condition: RecordCondition = .none) -> RecordChange {
        RecordChange(.put(write), condition: condition)
    }

    /// Deletes a record.
    public static func delete(id: String, user: String? = nil, condition: RecordCondition = .none) -> RecordChange {
        RecordChange(.delete(id: id, user: user), condition: condition)
    }
}

/// Identifies one push of a sync client, for exactly-once application.
public struct ClientPush: Sendable, Hashable {
    /// The client's stable id (one per local store).
    public var clientID: String
    /// The push's number, strictly increasing per client.
    public var pushID: Int64

    /// Creates a push identity.
    public init(clientID: String, pushID: Int64) {
        self.clientID = clientID
        self.pushID = pushID
    }
}

/// The outcome of applying a batch of changes.
public struct CommitResult: Sendable, Hashable {
    /// The layer revision after the batch (unchanged when nothing was applied).
    public var revision: Int64
    /// The records as written by the batch (tombstones for deletions), in the order of the changes.
    public var applied: [StoredRecord]
    /// The changes skipped under ``ConditionFailurePolicy/skipChange``.
    public var skipped: [SkippedChange]
    /// Whether the batch's ``ClientPush`` had been applied before (or a later one had), so nothing
    /// was written this time.
    public var isDuplicatePush: Bool

    /// Creates a commit result.
    public init(revision: Int64, applied: [StoredRecord], skipped: [SkippedChange], isDuplicatePush: Bool = false) {
        self.revision = revision
        self.applied = applied
        self.skipped = skipped
        self.isDuplicatePush = isDuplicatePush
    }
}

/// A change that was not applied, with the reason.
public struct SkippedChange: Sendable, Hashable {
    /// The id of the record the change was about.
    public var recordID: String
    /// Why the change was not applied.
    public var error: StorageError

    /// Creates a skipped change.
    public init(recordID: String, error: StorageError) {
        self.recordID = recordID
        self.error = error
    }
}

/// Everything that changed on a layer after a revision.
public struct LayerChanges: Sendable, Hashable {
    /// The layer's current revision.
    public var revision: Int64
    /// The records (tombstones included) with a revision greater than the one asked for, by revision.
    public var records: [StoredRecord]

    /// Creates a change list.
    public init(revision: Int64, records: [StoredRecord]) {
        self.revision = revision
        self.records = records
    }
}

/// A consistent view of one layer inside a write transaction, for deciding a batch of changes
/// against the records as they are at commit time.
public protocol LayerTransactionReader {
    /// The layer's revision before the batch.
    var revision: Int64 { get }
    /// The record with the given id (tombstones included), or `nil`.
    func record(id: String) throws -> StoredRecord?
    /// The live comments whose thread root (`rootId`) is the given record.
    func comments(inThread rootID: String) throws -> [StoredRecord]
}

/// The changes a decision made inside a write transaction, plus what the caller wants to keep from it.
public struct LayerDecision<Outcome: Sendable>: Sendable {
    /// The changes to apply; failed conditions are skipped and reported.
    public var changes: [RecordChange]
    /// Whatever else the decision produced (rejections, for example).
    public var outcome: Outcome

    /// Creates a decision.
    public init(changes: [RecordChange], outcome: Outcome) {
        self.changes = changes
        self.outcome = outcome
    }
}
