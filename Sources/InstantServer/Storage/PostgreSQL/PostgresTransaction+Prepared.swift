import Foundation
import PostgresNIO

/// The statements of a push's group transaction, prepared once per connection under a fixed name:
/// PostgreSQL parses and analyses each only once, and can keep a generic plan, where an unnamed
/// statement is parsed and planned on every execution. Their SQL is fixed: lists travel as arrays.
///
/// Each names itself: postgres-nio's default name is the type's name, which it builds with
/// reflection each time a statement runs (2.3% of the transaction thread's samples in a profile of
/// the 1-change pushes on PostgreSQL).
enum PreparedStatements {
    /// The layer locked for a group (`FOR UPDATE OF layers`), with the document's page count and
    /// the version of its row (`xmin`, which locking does not change).
    struct LockLayer: PostgresPreparedStatement {
        static let name = "instant_lock_layer"
        static let sql = """
            SELECT layers.revision, documents.page_count, layers.xmin::text
            FROM layers JOIN documents ON documents.id = layers.document_id
            WHERE layers.document_id = $1 AND layers.name = $2
            FOR UPDATE OF layers
            """
        typealias Row = (Int64, Int, String)
        var documentID: String
        var layer: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(documentID)
            bindings.append(layer)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// Records of a layer by id, each looked up in the primary key.
    ///
    /// Written as one lookup per id (a `LATERAL` subquery with `LIMIT 1`, which the planner keeps
    /// as a nested loop) rather than `id = ANY($3)`: the plan of a prepared statement is made once
    /// for any values, and when the statistics say a layer has few records (a young table, or many
    /// small layers beside one large one), PostgreSQL plans `id = ANY($3)` or a join with the ids as
    /// a filter over every record of the layer, which on a large layer costs a scan of it per group.
    struct RecordsByID: PostgresPreparedStatement {
        static let name = "instant_records_by_id"
        static let sql = """
            SELECT found.* FROM (SELECT DISTINCT unnest($3::text[])) AS wanted(id)
            CROSS JOIN LATERAL (
                SELECT \(PostgresTransaction.recordColumns) FROM records
                WHERE document_id = $1 AND layer = $2 AND id = wanted.id
                LIMIT 1
            ) AS found
            """
        typealias Row = StoredRecord
        var documentID: String
        var layer: String
        var ids: [String]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(documentID)
            bindings.append(layer)
            bindings.append(ids)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try PostgresTransaction.record(from: row) }
    }

    /// The records of a layer changed after a revision, by revision then id.
    struct RecordsChangedAfter: PostgresPreparedStatement {
        static let name = "instant_records_changed_after"
        static let sql = """
            SELECT \(PostgresTransaction.recordColumns) FROM records
            WHERE document_id = $1 AND layer = $2 AND \(PostgresTransaction.changed(after: "$3"))
            ORDER BY revision, id
            """
        typealias Row = StoredRecord
        var documentID: String
        var layer: String
        var revision: Int64

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(documentID)
            bindings.append(layer)
            bindings.append(revision)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try PostgresTransaction.record(from: row) }
    }

    /// What a group reads, in one statement: the records with the ids of `$3` (part 0), the records
    /// changed after revision `$6` (part 1, none when `$6` is `NULL`), the last push ids of the
    /// clients of `$4` and `$5` (part 2, in the last three columns), and the layer (part 3: the
    /// version of its row, `xmin`, in the column of ids, its revision in that of revisions, and
    /// the document's page count in that of PDF object ids). Each lookup by key goes into the
    /// primary key one key at a time, as in ``RecordsByID`` (with `IN`, the plan kept for the
    /// statement could read the push state of every client of the layer).
    struct GroupReads: PostgresPreparedStatement {
        static let name = "instant_group_reads"
        static let sql = """
            SELECT 0, found.*, NULL::text, NULL::text, NULL::bigint
            FROM (SELECT DISTINCT unnest($3::text[])) AS wanted(id)
            CROSS JOIN LATERAL (
                SELECT \(PostgresTransaction.recordColumns) FROM records
                WHERE document_id = $1 AND layer = $2 AND id = wanted.id
                LIMIT 1
            ) AS found
            UNION ALL
            SELECT 1, \(PostgresTransaction.recordColumns), NULL, NULL, NULL FROM records
            WHERE document_id = $1 AND layer = $2 AND \(PostgresTransaction.changed(after: "$6::bigint"))
            UNION ALL
            SELECT 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, found.*
            FROM unnest($4::text[], $5::text[]) AS wanted(user_scope, client_id)
            CROSS JOIN LATERAL (
                SELECT user_scope, client_id, push_id FROM client_pushes
                WHERE document_id = $1 AND layer = $2 AND user_scope = wanted.user_scope
                    AND client_id = wanted.client_id
                LIMIT 1
            ) AS found
            UNION ALL
            SELECT 3, layers.xmin::text, NULL, layers.revision, NULL, NULL, NULL, NULL,
                documents.page_count::bigint, NULL, NULL, NULL, NULL, NULL
            FROM layers JOIN documents ON documents.id = layers.document_id
            WHERE layers.document_id = $1 AND layers.name = $2
            """
        enum Row {
            case record(StoredRecord)
            case changed(StoredRecord)
            case push(userScope: String, clientID: String, pushID: Int64)
            case layer(version: String, revision: Int64, pageCount: Int)
        }
        var documentID: String
        var layer: String
        var ids: [String]
        var clients: [ClientIdentity]
        var changedAfter: Int64?

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 6)
            bindings.append(documentID)
            bindings.append(layer)
            bindings.append(ids)
            bindings.append(clients.map(\.userScope))
            bindings.append(clients.map(\.clientID))
            bindings.append(changedAfter)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {
            let (
                part, id, kind, revision, isDeleted, group, createdBy, updatedBy, pdfObjectID, content, updatedAt,
                userScope, clientID, pushID
            ) = try row.decode(
                (
                    Int32, String?, String?, Int64?, Bool?, String?, String?, String?, Int?, Data?, Double?, String?,
                    String?, Int64?
                ).self)
            if part == 2, let userScope, let clientID, let pushID {
                return .push(userScope: userScope, clientID: clientID, pushID: pushID)
            }
            if part == 3, let id, let revision, let pdfObjectID {
                return .layer(version: id, revision: revision, pageCount: pdfObjectID)
            }
            guard part < 2, let id, let kind, let revision, let isDeleted, let content, let updatedAt else {
                throw StorageError(
                    .corrupted, "A row of the layer '\(layer)' read for a group has a NULL where a value belongs.")
            }
            let record = StoredRecord(
                id: id, kind: RecordKind(rawValue: kind), revision: revision, isDeleted: isDeleted, group: group,
                createdBy: createdBy, updatedBy: updatedBy, pdfObjectID: pdfObjectID, content: content,
                updatedAt: Date(timeIntervalSince1970: updatedAt))
            return part == 0 ? .record(record) : .changed(record)
        }
    }

    /// The end of a group in one statement: the records it wrote (an upsert of the rows of `$10`
    /// to `$20`), the layer's revision (unless `nil`), the clients' push ids (never lowered), and
    /// the notifications; it returns whether it wrote them, how many notifications it sent, and the
    /// version of the layer's row it wrote (the row is updated by every group that writes, so its
    /// `xmin` names the last of them).
    ///
    /// With a version of the layer's row (`$21`, its `xmin` when a group that does not lock the
    /// layer read it), the statement writes only if the row still has it: `revised` then updates
    /// the row (which waits for a writer that holds it, then checks the version of the row that
    /// writer left), and the other writes run only if it did; and only if the layer has no record
    /// with an id of `$22` (those a group that read nothing takes as absent: as every writer of
    /// the layer's records writes its row, the version that still holds says no writer added one
    /// since the statement's snapshot). Without a version, the layer is locked
    /// by the statement's transaction, and everything is written. Data-modifying WITH queries run
    /// once whether or not the main query reads them, and each touches its own table; `pg_notify`
    /// delivers at commit, in commit order, and not at all on rollback.
    struct FinishCommits: PostgresPreparedStatement {
        static let name = "instant_finish_commits"
        static let sql = """
            WITH revised AS (
                UPDATE layers SET revision = coalesce($3::bigint, revision)
                WHERE document_id = $1 AND name = $2 AND ($21::text IS NULL OR xmin = $21::text::xid)
                    AND NOT EXISTS (
                        SELECT 1 FROM unnest($22::text[]) AS assumed(id)
                        CROSS JOIN LATERAL (
                            SELECT 1 FROM records WHERE document_id = $1 AND layer = $2 AND id = assumed.id LIMIT 1
                        ) AS found)
                RETURNING xmin::text AS version
            ), applies AS (
                SELECT $21::text IS NULL OR EXISTS (SELECT 1 FROM revised) AS yes
            ), written AS (
                INSERT INTO records (document_id, layer, id, kind, revision, deleted, group_name, created_by,
                    updated_by, pdf_object_id, content, updated_at, thread_root)
                SELECT $1, $2, rows.*
                FROM unnest($10::text[], $11::text[], $12::bigint[], $13::boolean[], $14::text[], $15::text[],
                    $16::text[], $17::bigint[], $18::bytea[], $19::double precision[], $20::text[]) AS rows
                WHERE (SELECT yes FROM applies)
                ON CONFLICT (document_id, layer, id) DO UPDATE SET kind = EXCLUDED.kind,
                    revision = EXCLUDED.revision, deleted = EXCLUDED.deleted, group_name = EXCLUDED.group_name,
                    created_by = EXCLUDED.created_by, updated_by = EXCLUDED.updated_by,
                    pdf_object_id = EXCLUDED.pdf_object_id, content = EXCLUDED.content,
                    updated_at = EXCLUDED.updated_at, thread_root = EXCLUDED.thread_root
                RETURNING 1
            ), pushed AS (
                INSERT INTO client_pushes (document_id, layer, user_scope, client_id, push_id, revision)
                SELECT $1, $2, pushes.* FROM unnest($4::text[], $5::text[], $6::bigint[], $7::bigint[]) AS pushes
                WHERE (SELECT yes FROM applies)
                ON CONFLICT (document_id, layer, user_scope, client_id)
                    DO UPDATE SET push_id = EXCLUDED.push_id, revision = EXCLUDED.revision
                    WHERE client_pushes.push_id < EXCLUDED.push_id
                RETURNING 1
            ), notified AS (
                SELECT pg_notify($8, payload) FROM unnest($9::text[]) AS payload WHERE (SELECT yes FROM applies)
            )
            SELECT yes, (SELECT count(*) FROM notified), (SELECT version FROM revised) FROM applies
            """
        typealias Row = (Bool, Int64, String?)
        var documentID: String
        var layer: String
        var revision: Int64?
        var pushes: [StoredPush]
        var payloads: [String]
        /// At most one row per record id (an upsert may not meet one key twice).
        var rows: [RecordRow]
        /// The version of the layer's row the statement writes only with, or `nil` to write.
        var ifVersion: String?
        /// The ids of records the statement writes only without (tombstones count).
        var absent: [String]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 22)
            bindings.append(documentID)
            bindings.append(layer)
            bindings.append(revision)
            bindings.append(pushes.map(\.client.userScope))
            bindings.append(pushes.map(\.client.clientID))
            bindings.append(pushes.map(\.pushID))
            bindings.append(pushes.map(\.revision))
            bindings.append(PostgresBackend.eventChannel)
            bindings.append(payloads)
            let records = rows.map(\.record)
            bindings.append(records.map(\.id))
            bindings.append(records.map(\.kind.rawValue))
            bindings.append(records.map(\.revision))
            bindings.append(records.map(\.isDeleted))
            try bindings.append(PostgresColumn(records.map(\.group)), context: .default)
            try bindings.append(PostgresColumn(records.map(\.createdBy)), context: .default)
            try bindings.append(PostgresColumn(records.map(\.updatedBy)), context: .default)
            try bindings.append(PostgresColumn(records.map(\.pdfObjectID)), context: .default)
            try bindings.append(PostgresColumn(records.map(\.content), arrayType: .byteaArray), context: .default)
            bindings.append(records.map(\.updatedAt.timeIntervalSince1970))
            try bindings.append(PostgresColumn(rows.map(\.threadRoot)), context: .default)
            bindings.append(ifVersion)
            bindings.append(absent)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }
}

extension PostgresTransaction {
    /// Runs a prepared statement and decodes its rows; a failure names `action`.
    func rows<Statement: PostgresPreparedStatement>(
        _ statement: Statement, _ action: @autoclosure () -> String
    ) async throws -> [Statement.Row] {
        do {
            var rows: [Statement.Row] = []
            for try await row in try await connection.execute(statement, logger: logger) { rows.append(row) }
            return rows
        } catch {
            throw PostgresBackend.failure(error, while: action())
        }
    }
}
