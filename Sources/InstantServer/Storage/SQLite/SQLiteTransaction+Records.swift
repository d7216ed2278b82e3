import Foundation
import GRDB
import InstantJSON

extension SQLiteTransaction {
    func liveRecords(
        documentID: String, layer: String, kind: RecordKind?, onPage pageIndex: Int?, offset: Int, limit: Int?
    ) async throws -> [StoredRecord] {
        try await run { db in
            var sql = "SELECT \(Self.recordColumns) FROM records WHERE layer_id = \(Self.layerIDOf) AND deleted = 0"
            var arguments: StatementArguments = [documentID, layer]
            if let kind {
                sql += " AND kind = ?"
                arguments += [kind.rawValue]
            }
            if let pageIndex {
                // Contents are stored as JSON text in a BLOB, which SQLite's JSON functions read as text.
                sql += " AND json_extract(CAST(content AS TEXT), '$.pageIndex') = ?"
                arguments += [pageIndex]
            }
            sql += " ORDER BY id LIMIT ? OFFSET ?"
            arguments += [limit ?? -1, offset]
            return try Self.records(Row.fetchCursor(db, sql: sql, arguments: arguments))
        }
    }

    func records(documentID: String, layer: String, ids: [String]) async throws -> [StoredRecord] {
        guard !ids.isEmpty else { return [] }
        // The ids as one JSON array: one statement, whatever their number, where a statement per id
        // cost its binding and stepping each time. SQLite looks each id up in the primary key as it
        // goes through the array (`CROSS JOIN` keeps the array outside), which costs a third less
        // than `id IN (…)`, whose list SQLite first copies into an index of its own; each id goes
        // in once, so that each record comes out once.
        var seen: Set<String> = []
        seen.reserveCapacity(ids.count)
        let array = JSONValue.array(ids.filter { seen.insert($0).inserted }.map(JSONValue.string)).serializedString()
        return try await run { db in
            try Self.records(
                Row.fetchCursor(db.cachedStatement(sql: Self.recordsByIDs), arguments: [array, documentID, layer]))
        }
    }

    func comments(documentID: String, layer: String, threadRoots: [String]) async throws -> [StoredRecord] {
        guard !threadRoots.isEmpty else { return [] }
        return try await run { db in
            let statement = try db.cachedStatement(
                sql: """
                    SELECT \(Self.recordColumns) FROM records
                    WHERE layer_id = \(Self.layerIDOf) AND thread_root = ? AND deleted = 0
                    """)
            var found: [StoredRecord] = []
            for root in Set(threadRoots) {
                found += try Self.records(Row.fetchCursor(statement, arguments: [documentID, layer, root]))
            }
            return found.sorted { $0.id < $1.id }
        }
    }

    func records(documentID: String, layer: String, changedAfter revision: Int64) async throws -> [StoredRecord] {
        try await run { db in
            try Self.records(
                Row.fetchCursor(
                    db.cachedStatement(
                        sql: """
                            SELECT \(Self.recordColumns) FROM records WHERE layer_id = \(Self.layerIDOf) AND revision > ?
                            ORDER BY revision, id
                            """),
                    arguments: [documentID, layer, revision]))
        }
    }

    func upsert(_ rows: [RecordRow], documentID: String, layer: String) async throws {
        guard !rows.isEmpty else { return }
        try await run { db in try Self.upsert(rows, layerID: Self.layerID(db, documentID: documentID, layer: layer), db)
        }
    }

    /// Writes rows into the layer with the given id (``layerID(_:documentID:layer:)``), bound
    /// straight to SQLite, several to a statement.
    static func upsert(_ rows: [RecordRow], layerID: Int64, _ db: Database) throws {
        try SQLiteRowWriter.insert(rows, db, with: recordsInsert) { values, row in
            let record = row.record
            values.append(layerID)
            values.append(record.id)
            values.append(record.kind.rawValue)
            values.append(record.revision)
            values.append(record.isDeleted)
            values.append(record.group)
            values.append(record.createdBy)
            values.append(record.updatedBy)
            values.append(record.pdfObjectID)
            values.append(record.content)
            values.append(record.updatedAt.timeIntervalSince1970)
            values.append(row.threadRoot)
        }
    }

    /// The statements of ``upsert(_:layerID:_:)``.
    private static let recordsInsert = SQLiteRowWriter.Insert(
        """
        INSERT OR REPLACE INTO records (layer_id, id, kind, revision, deleted, group_name, created_by, updated_by,
            pdf_object_id, content, updated_at, thread_root)
        VALUES
        """,
        columns: 12)

    /// The columns ``record(from:)`` reads, in its order: rows are decoded by position, which
    /// is much cheaper than by name on the paths that read thousands of rows.
    static let recordColumns =
        "id, kind, revision, deleted, group_name, created_by, updated_by, pdf_object_id, content, updated_at"

    /// The records of a layer (by document id and name) with the ids of a JSON array, each id
    /// looked up in the primary key. Made once: splitting the columns to name their table took
    /// longer than the lookups of a group's hundreds of ids.
    private static let recordsByIDs = """
        SELECT \(recordColumns.split(separator: ", ").map { "records.\($0)" }.joined(separator: ", "))
        FROM json_each(?) AS wanted CROSS JOIN records
        WHERE records.layer_id = \(layerIDOf) AND records.id = wanted.value
        """

    /// The records of a cursor's rows, each decoded in place as the statement steps (rows are not
    /// copied first, as `fetchAll` would).
    static func records(_ rows: RowCursor) throws -> [StoredRecord] {
        var records: [StoredRecord] = []
        while let row = try rows.next() { records.append(record(from: row)) }
        return records
    }

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
