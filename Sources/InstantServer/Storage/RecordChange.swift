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

/// The sync client a push comes from, as the server keys its exactly-once state: the client's own
/// id, scoped by the user of the token that sent it.
///
/// Scoping by user is what keeps one user from touching another's exactly-once state: a token for
/// `bob` that sends `alice`'s client id reaches a different state than `alice`'s tokens do.
/// Tokens without `user_id` share the scope of anonymous users, where the client id itself (random,
/// and never shown to other clients) is what tells clients apart.
public struct ClientIdentity: Sendable, Hashable {
    /// The `user_id` of the token, or `nil` for anonymous tokens.
    public var userID: String?
    /// The client's stable id (one per local store).
    public var clientID: String

    /// Creates a client identity.
    public init(userID: String?, clientID: String) {
        self.userID = userID
        self.clientID = clientID
    }

    /// The user scope as stored: the user id, or `""` for anonymous tokens.
    public var userScope: String { userID ?? "" }

    /// Identities are equal when they name the same stored state: an anonymous token and one whose
    /// `user_id` is empty share the scope `""`, and so one client's last push id.
    public static func == (left: ClientIdentity, right: ClientIdentity) -> Bool {
        left.clientID == right.clientID && left.userScope == right.userScope
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(userScope)
        hasher.combine(clientID)
    }
}

/// Identifies one push of a sync client, for exactly-once application.
public struct ClientPush: Sendable, Hashable {
    /// The client the push comes from.
    public var client: ClientIdentity
    /// The push's number, strictly increasing per client.
    public var pushID: Int64

    /// How far above the client's last push id a new one may be. Clients number their pushes
    /// 1, 2, 3, …, so a larger step is a mistake or an attempt to make every later push of the
    /// client look like a repeat; it is refused and changes nothing.
    public static let maximumStep: Int64 = 1_000_000

    /// Creates a push identity.
    public init(client: ClientIdentity, pushID: Int64) {
        self.client = client
        self.pushID = pushID
    }

    /// Why the push cannot follow the client's last push, or `nil` if it can: a push id more than
    /// ``maximumStep`` above the last one (above 0 for a client's first push).
    public func stepProblem(after last: Int64?) -> StorageError? {
        let previous = last ?? 0
        guard pushID > previous, pushID - previous > Self.maximumStep else { return nil }
        return StorageError(
            .pushOutOfRange,
            "The pushId \(pushID) is more than \(Self.maximumStep) above this client's last push id (\(previous)); "
                + "number a client's pushes 1, 2, 3, … (a client that lost count starts again with a new clientId)."
        )
    }

    /// Whether the push was applied before: its id is not above the client's last one.
    public func isRepeat(after last: Int64?) -> Bool {
        guard let last else { return false }
        return pushID <= last
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

extension Array {
    /// The elements without those whose key comes again later: the last of each key, in the order
    /// of those last ones: the rows of records written more than once, each as last written (an
    /// `INSERT … ON CONFLICT DO UPDATE` may not meet one key twice).
    func keepingLast(by key: (Element) -> String) -> [Element] {
        var lastIndex: [String: Int] = [:]
        for (index, element) in enumerated() { lastIndex[key(element)] = index }
        return enumerated().filter { lastIndex[key($0.element)] == $0.offset }.map(\.element)
    }
}
