import Foundation
import GRDB
import InstantJSON

/// A record as the app sees it: the pending local version if there is one, else the server's.
struct LocalRecord: Sendable, Hashable {
    var id: String
    var kind: String
    var content: JSONValue
    var group: String?
    var createdBy: String?
    /// Whether the record has local changes the server has not acknowledged.
    var isPending: Bool
}

/// A local edit of a record.
enum LocalEdit: Sendable, Hashable {
    /// Create or replace the record (the full Instant JSON object), moving it to a group or not.
    case put(id: String, kind: String, content: JSONValue, group: GroupAssignment)
    /// Delete the record.
    case delete(id: String)

    var id: String {
        switch self {
        case .put(let id, _, _, _), .delete(let id): id
        }
    }
}

extension LocalStore {
    /// The visible records of a layer, optionally of one kind, by id.
    func records(documentID: String, layer: String, kind: String? = nil) throws(InstantError) -> [LocalRecord] {
        try read { db in
            var sql = """
                SELECT * FROM records WHERE document_id = ? AND layer = ?
                AND ((pending = 1 AND local_content IS NOT NULL) OR (pending = 0 AND server_content IS NOT NULL))
                """
            var arguments: StatementArguments = [documentID, layer]
            if let kind {
                sql += " AND kind = ?"
                arguments += [kind]
            }
            return try Row.fetchAll(db, sql: sql + " ORDER BY id", arguments: arguments).compactMap(Self.visible)
        }
    }

    /// Whether every stored version of the layer's records is a JSON object (the store's content
    /// is intact): a damaged store makes its descriptor invalid rather than show wrong data.
    func isIntact(documentID: String, layer: String) throws(InstantError) -> Bool {
        try read { db in
            let cursor = try Row.fetchCursor(
                db, sql: "SELECT server_content, local_content FROM records WHERE document_id = ? AND layer = ?",
                arguments: [documentID, layer])
            while let row = try cursor.next() {
                for index in 0..<2 {
                    guard let data = row[index] as Data? else { continue }
                    guard case .object? = try? JSONValue(parsing: data) else { return false }
                }
            }
            return true
        }
    }

    /// One visible record, or `nil`.
    func record(documentID: String, layer: String, id: String) throws(InstantError) -> LocalRecord? {
        try read { db in
            try Row.fetchOne(
                db, sql: "SELECT * FROM records WHERE document_id = ? AND layer = ? AND id = ?",
                arguments: [documentID, layer, id]
            ).flatMap(Self.visible)
        }
    }

    /// The server's metadata of a record it has, as last received, or `nil`.
    func serverMetadata(documentID: String, layer: String, id: String) throws(InstantError) -> InstantRecordMetadata? {
        try read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT server_group, created_by, updated_by, server_revision FROM records
                    WHERE document_id = ? AND layer = ? AND id = ? AND server_content IS NOT NULL
                    """,
                arguments: [documentID, layer, id]
            ).map { row in
                InstantRecordMetadata(
                    group: row[0], createdBy: row[1], updatedBy: row[2], revision: row[3] ?? 0)
            }
        }
    }

    static func visible(_ row: Row) -> LocalRecord? {
        let pending: Bool = row["pending"]
        let data: Data? = pending ? row["local_content"] : row["server_content"]
        guard let data, case .object(var object)? = try? JSONValue(parsing: data) else { return nil }
        // The record id is the record's identity, whether or not its content repeats it.
        let id: String = row["id"]
        object["id"] = .string(id)
        let content = JSONValue.object(object)
        return LocalRecord(
            id: id, kind: row["kind"], content: content,
            group: pending ? row["local_group"] : row["server_group"], createdBy: row["created_by"],
            isPending: pending)
    }

    /// Commits local edits in one transaction; they stay pending until the server acknowledges them.
    func commit(_ edits: [LocalEdit], documentID: String, layer: String) throws(InstantError) {
        try write { db in
            try Self.requireLayer(db, documentID: documentID, layer: layer)
            for edit in edits {
                switch edit {
                case .put(let id, let kind, let content, let group):
                    var name: String?
                    if case .assigned(let assigned) = group { name = assigned }
                    try db.execute(
                        sql: """
                            INSERT INTO records (document_id, layer, id, kind, pending, local_version, local_content,
                                local_group, local_group_set)
                            VALUES (?, ?, ?, ?, 1, 1, ?, ?, ?)
                            ON CONFLICT (document_id, layer, id) DO UPDATE SET
                                pending = 1, local_version = local_version + 1, local_content = excluded.local_content,
                                local_group = excluded.local_group, local_group_set = excluded.local_group_set
                            """,
                        arguments: [documentID, layer, id, kind, content.serialized(), name, group != .unchanged])
                case .delete(let id):
                    // Deleting what is not there does nothing.
                    try db.execute(
                        sql: """
                            UPDATE records SET pending = 1, local_version = local_version + 1, local_content = NULL,
                                local_group = NULL, local_group_set = 0
                            WHERE document_id = ? AND layer = ? AND id = ?
                            """,
                        arguments: [documentID, layer, id])
                }
            }
        }
    }

    /// Whether the layer has changes the server has not acknowledged.
    func hasPendingChanges(documentID: String, layer: String) throws(InstantError) -> Bool {
        try read { db in try Self.hasPendingChanges(db, documentID: documentID, layer: layer) }
    }

    /// Whether the layer has pending records or a push in flight, inside the caller's transaction.
    static func hasPendingChanges(_ db: Database, documentID: String, layer: String) throws -> Bool {
        try Bool.fetchOne(
            db,
            sql: """
                SELECT EXISTS (SELECT 1 FROM records WHERE document_id = ? AND layer = ? AND pending = 1)
                OR EXISTS (SELECT 1 FROM pushes WHERE document_id = ? AND layer = ?)
                """,
            arguments: [documentID, layer, documentID, layer]) ?? false
    }

    static func requireLayer(_ db: Database, documentID: String, layer: String) throws {
        guard
            try Bool.fetchOne(
                db, sql: "SELECT 1 FROM layers WHERE document_id = ? AND name = ?", arguments: [documentID, layer])
                != nil
        else {
            throw InstantError(
                .notDownloaded, "The layer '\(layer)' of '\(documentID)' is not downloaded; download it first.")
        }
    }

    /// Stores the server's version of a record (a tombstone removes it unless a local change is pending).
    static func storeServerVersion(_ db: Database, _ record: SyncRecord, documentID: String, layer: String) throws {
        if let content = record.content {
            // Cached: a download stores thousands of records with this statement.
            try db.cachedStatement(
                sql: """
                    INSERT INTO records (document_id, layer, id, kind, server_revision, server_content, server_group,
                        created_by, updated_by)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (document_id, layer, id) DO UPDATE SET
                        kind = excluded.kind, server_revision = excluded.server_revision,
                        server_content = excluded.server_content, server_group = excluded.server_group,
                        created_by = excluded.created_by, updated_by = excluded.updated_by
                    """
            ).execute(
                arguments: [
                    documentID, layer, record.id, record.kind, record.revision, content.serialized(), record.group,
                    record.createdBy, record.updatedBy,
                ])
        } else {
            try db.execute(
                sql: "DELETE FROM records WHERE document_id = ? AND layer = ? AND id = ? AND pending = 0",
                arguments: [documentID, layer, record.id])
            try db.execute(
                sql: """
                    UPDATE records SET server_revision = ?, server_content = NULL
                    WHERE document_id = ? AND layer = ? AND id = ?
                    """,
                arguments: [record.revision, documentID, layer, record.id])
        }
    }
}
