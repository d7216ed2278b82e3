import Foundation
import PostgresNIO

/// The statements of a push's group transaction, prepared once per connection (postgres-nio names
/// them after their type): PostgreSQL parses and analyses each only once, and can keep a generic
/// plan, where an unnamed statement is parsed and planned on every execution. Their SQL is fixed:
/// lists travel as arrays.
enum PreparedStatements {
    /// The layer locked for a group (`FOR UPDATE OF layers`), with the document's page count.
    struct LockLayer: PostgresPreparedStatement {
        static let sql = """
            SELECT layers.revision, jsonb_array_length(documents.pages)
            FROM layers JOIN documents ON documents.id = layers.document_id
            WHERE layers.document_id = $1 AND layers.name = $2
            FOR UPDATE OF layers
            """
        typealias Row = (Int64, Int)
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

    /// The last push ids of some clients on a layer, each looked up in the primary key (as
    /// ``RecordsByID`` looks up records: with `IN`, the plan kept for the statement could read the
    /// push state of every client of the layer).
    struct LastPushIDs: PostgresPreparedStatement {
        static let sql = """
            SELECT found.* FROM unnest($3::text[], $4::text[]) AS wanted(user_scope, client_id)
            CROSS JOIN LATERAL (
                SELECT user_scope, client_id, push_id FROM client_pushes
                WHERE document_id = $1 AND layer = $2 AND user_scope = wanted.user_scope
                    AND client_id = wanted.client_id
                LIMIT 1
            ) AS found
            """
        typealias Row = (String, String, Int64)
        var documentID: String
        var layer: String
        var clients: [ClientIdentity]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 4)
            bindings.append(documentID)
            bindings.append(layer)
            bindings.append(clients.map(\.userScope))
            bindings.append(clients.map(\.clientID))
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
        static let sql = """
            SELECT \(PostgresTransaction.recordColumns) FROM records
            WHERE document_id = $1 AND layer = $2 AND revision > $3
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

    /// The end of a group transaction in one statement: the layer's revision (unless `nil`), the
    /// clients' push ids, and the notifications. Data-modifying WITH queries run once whether or not
    /// the main query reads them; `pg_notify` delivers at commit, in commit order, and not at all on
    /// rollback.
    struct FinishCommits: PostgresPreparedStatement {
        static let sql = """
            WITH revised AS (
                UPDATE layers SET revision = $3::bigint
                WHERE document_id = $1 AND name = $2 AND $3::bigint IS NOT NULL
                RETURNING 1
            ), pushed AS (
                INSERT INTO client_pushes (document_id, layer, user_scope, client_id, push_id, revision)
                SELECT $1, $2, pushes.* FROM unnest($4::text[], $5::text[], $6::bigint[], $7::bigint[]) AS pushes
                ON CONFLICT (document_id, layer, user_scope, client_id)
                    DO UPDATE SET push_id = EXCLUDED.push_id, revision = EXCLUDED.revision
                RETURNING 1
            )
            SELECT pg_notify($8, payload) FROM unnest($9::text[]) AS payload
            """
        typealias Row = Void
        var documentID: String
        var layer: String
        var revision: Int64?
        var pushes: [StoredPush]
        var payloads: [String]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 9)
            bindings.append(documentID)
            bindings.append(layer)
            bindings.append(revision)
            bindings.append(pushes.map(\.client.userScope))
            bindings.append(pushes.map(\.client.clientID))
            bindings.append(pushes.map(\.pushID))
            bindings.append(pushes.map(\.revision))
            bindings.append(PostgresBackend.eventChannel)
            bindings.append(payloads)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {}
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
