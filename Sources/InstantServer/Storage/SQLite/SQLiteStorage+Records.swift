import Foundation
import GRDB
import InstantJSON

extension SQLiteStorage {
    public func records(documentID: String, layer: String, kind: RecordKind?) async throws -> [StoredRecord] {
        try await read { db in
            _ = try Self.requireLayer(db, documentID: documentID, name: layer)
            var sql =
                "SELECT \(SQLiteStorage.recordColumns) FROM records WHERE document_id = ? AND layer = ? AND deleted = 0"
            var arguments: StatementArguments = [documentID, layer]
            if let kind {
                sql += " AND kind = ?"
                arguments += [kind.rawValue]
            }
            return try Row.fetchAll(db, sql: sql + " ORDER BY id", arguments: arguments).map(Self.record(from:))
        }
    }

    public func record(documentID: String, layer: String, id: String) async throws -> StoredRecord? {
        try await read { db in
            _ = try Self.requireLayer(db, documentID: documentID, name: layer)
            return try Self.fetchRecord(db, documentID: documentID, layer: layer, id: id)
        }
    }

    public func changes(documentID: String, layer: String, since revision: Int64) async throws -> LayerChanges {
        try await read { db in
            let current = try Self.requireLayer(db, documentID: documentID, name: layer)
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(SQLiteStorage.recordColumns) FROM records WHERE document_id = ? AND layer = ? AND revision > ?
                    ORDER BY revision, id
                    """,
                arguments: [documentID, layer, revision]
            )
            return LayerChanges(revision: current.revision, records: try rows.map(Self.record(from:)))
        }
    }

    public func apply(
        _ changes: [RecordChange],
        documentID: String,
        layer: String,
        push: ClientPush?,
        onConditionFailure: ConditionFailurePolicy
    ) async throws -> CommitResult {
        try await write { db in
            try Self.applyChanges(
                db,
                changes,
                documentID: documentID,
                layer: layer,
                push: push,
                onConditionFailure: onConditionFailure
            )
        }
    }

    public func apply<Outcome: Sendable>(
        documentID: String,
        layer: String,
        push: ClientPush?,
        deciding decide: @escaping @Sendable (any LayerTransactionReader) throws -> LayerDecision<Outcome>
    ) async throws -> (result: CommitResult, outcome: Outcome?) {
        try await write { db in
            let current = try Self.requireLayer(db, documentID: documentID, name: layer)
            if let push {
                let last = try Self.lastPushID(db, documentID: documentID, layer: layer, client: push.client)
                if push.isRepeat(after: last) {
                    return (
                        CommitResult(revision: current.revision, applied: [], skipped: [], isDuplicatePush: true), nil
                    )
                }
                if let problem = push.stepProblem(after: last) { throw problem }
            }
            let reader = TransactionReader(db: db, documentID: documentID, layer: layer, revision: current.revision)
            let decision = try decide(reader)
            let result = try Self.applyChanges(
                db,
                decision.changes,
                documentID: documentID,
                layer: layer,
                push: push,
                onConditionFailure: .skipChange
            )
            return (result, decision.outcome)
        }
    }

    /// The layer as seen inside one write transaction.
    struct TransactionReader: LayerTransactionReader {
        let db: Database
        let documentID: String
        let layer: String
        let revision: Int64

        func record(id: String) throws -> StoredRecord? {
            try SQLiteStorage.fetchRecord(db, documentID: documentID, layer: layer, id: id)
        }

        func comments(inThread rootID: String) throws -> [StoredRecord] {
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(SQLiteStorage.recordColumns) FROM records WHERE document_id = ? AND layer = ? AND thread_root = ? AND deleted = 0
                    ORDER BY id
                    """,
                arguments: [documentID, layer, rootID]
            ).map(SQLiteStorage.record(from:))
        }
    }

    static func lastPushID(_ db: Database, documentID: String, layer: String, client: ClientIdentity) throws
        -> Int64?
    {
        // Cached statements: these run for every change of every push.
        try Int64.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT push_id FROM client_pushes
                    WHERE document_id = ? AND layer = ? AND user_scope = ? AND client_id = ?
                    """
            ),
            arguments: [documentID, layer, client.userScope, client.clientID]
        )
    }

    /// Applies changes inside the caller's transaction.
    static func applyChanges(
        _ db: Database,
        _ changes: [RecordChange],
        documentID: String,
        layer: String,
        push: ClientPush?,
        onConditionFailure: ConditionFailurePolicy
    ) throws -> CommitResult {
        let current = try Self.requireLayer(db, documentID: documentID, name: layer)
        if let push {
            let last = try lastPushID(db, documentID: documentID, layer: layer, client: push.client)
            if push.isRepeat(after: last) {
                return CommitResult(revision: current.revision, applied: [], skipped: [], isDuplicatePush: true)
            }
            if let problem = push.stepProblem(after: last) { throw problem }
        }
        let revision = current.revision + 1
        let now = Date()
        var applied: [StoredRecord] = []
        var skipped: [SkippedChange] = []
        for change in changes {
            let existing = try Self.fetchRecord(db, documentID: documentID, layer: layer, id: change.recordID)
            if let failure = Self.check(change, against: existing) {
                switch onConditionFailure {
                case .abortBatch: throw failure
                case .skipChange:
                    skipped.append(SkippedChange(recordID: change.recordID, error: failure))
                    continue
                }
            }
            let record: StoredRecord
            switch change.operation {
            case .put(let write):
                let isLive = existing.map { !$0.isDeleted } ?? false
                record = StoredRecord(
                    id: write.id,
                    kind: write.kind,
                    revision: revision,
                    group: write.group,
                    createdBy: isLive ? existing?.createdBy : write.user,
                    updatedBy: write.user,
                    pdfObjectID: write.pdfObjectID ?? existing?.pdfObjectID,
                    content: write.content,
                    updatedAt: now
                )
            case .delete(let id, let user):
                guard let existing, !existing.isDeleted else {
                    // Deleting what is not there changes nothing.
                    continue
                }
                record = StoredRecord(
                    id: id,
                    kind: existing.kind,
                    revision: revision,
                    isDeleted: true,
                    group: existing.group,
                    createdBy: existing.createdBy,
                    updatedBy: user,
                    pdfObjectID: existing.pdfObjectID,
                    content: Data(),
                    updatedAt: now
                )
            }
            try Self.upsert(db, record, documentID: documentID, layer: layer)
            applied.append(record)
        }
        let newRevision = applied.isEmpty ? current.revision : revision
        if !applied.isEmpty {
            try db.execute(
                sql: "UPDATE layers SET revision = ? WHERE document_id = ? AND name = ?",
                arguments: [revision, documentID, layer]
            )
        }
        if let push {
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO client_pushes (document_id, layer, user_scope, client_id, push_id, revision)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [documentID, layer, push.client.userScope, push.client.clientID, push.pushID, newRevision]
            )
        }
        return CommitResult(revision: newRevision, applied: applied, skipped: skipped)
    }

    public func lastPushID(documentID: String, layer: String, client: ClientIdentity) async throws -> Int64? {
        try await read { db in
            try Self.lastPushID(db, documentID: documentID, layer: layer, client: client)
        }
    }

    static func check(_ change: RecordChange, against existing: StoredRecord?) -> StorageError? {
        let isLive = existing.map { !$0.isDeleted } ?? false
        switch change.condition {
        case .none:
            return nil
        case .exists:
            return isLive
                ? nil
                : StorageError(.recordNotFound, "No record has the id '\(change.recordID)' on this layer.")
        case .absent:
            return isLive
                ? StorageError(
                    .recordExists,
                    "A record with the id '\(change.recordID)' already exists on this layer. Update it instead, or use another id."
                ) : nil
        case .notDeletedAfter(let base):
            if let existing, existing.isDeleted, existing.revision > base {
                return StorageError(
                    .recordDeleted,
                    "The record '\(change.recordID)' was deleted at revision \(existing.revision), after revision \(base)."
                )
            }
            return nil
        }
    }

    static func fetchRecord(_ db: Database, documentID: String, layer: String, id: String) throws -> StoredRecord? {
        try Row.fetchOne(
            db.cachedStatement(
                sql: "SELECT \(SQLiteStorage.recordColumns) FROM records WHERE document_id = ? AND layer = ? AND id = ?"
            ),
            arguments: [documentID, layer, id]
        ).map(record(from:))
    }

    static func upsert(_ db: Database, _ record: StoredRecord, documentID: String, layer: String) throws {
        try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO records (document_id, layer, id, kind, revision, deleted, group_name, created_by,
                    updated_by, pdf_object_id, content, updated_at, thread_root)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(
            arguments: [
                documentID, layer, record.id, record.kind.rawValue, record.revision, record.isDeleted, record.group,
                record.createdBy, record.updatedBy, record.pdfObjectID, record.content,
                record.updatedAt.timeIntervalSince1970, threadRoot(of: record),
            ]
        )
    }

    /// The `rootId` of a live comment, kept in its own indexed column to find a thread's comments.
    static func threadRoot(of record: StoredRecord) -> String? {
        guard record.kind == .comment, !record.isDeleted else { return nil }
        return (try? JSONValue(parsing: record.content))?["rootId"]?.stringValue
    }

    /// The columns ``record(from:)`` reads, in its order: rows are decoded by position, which
    /// is much cheaper than by name on the paths that read thousands of rows.
    static let recordColumns =
        "id, kind, revision, deleted, group_name, created_by, updated_by, pdf_object_id, content, updated_at"

    static func record(from row: Row) -> StoredRecord {
        StoredRecord(
            id: row[0],
            kind: RecordKind(rawValue: row[1]),
            revision: row[2],
            isDeleted: row[3],
            group: row[4],
            createdBy: row[5],
            updatedBy: row[6],
            pdfObjectID: row[7],
            content: row[8],
            updatedAt: Date(timeIntervalSince1970: row[9])
        )
    }
}
