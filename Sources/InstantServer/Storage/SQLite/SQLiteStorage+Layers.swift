import Foundation
import GRDB

extension SQLiteStorage {
    public func layers(documentID: String) async throws -> [StoredLayer] {
        try await read { db in
            try Self.requireDocument(db, documentID)
            return try Row.fetchAll(
                db,
                sql: "SELECT name, revision FROM layers WHERE document_id = ? ORDER BY name",
                arguments: [documentID]
            ).map { StoredLayer(documentID: documentID, name: $0["name"], revision: $0["revision"]) }
        }
    }

    public func layer(documentID: String, name: String) async throws -> StoredLayer? {
        try await read { db in
            try Self.fetchLayer(db, documentID: documentID, name: name)
        }
    }

    public func createLayer(documentID: String, name: String, source: LayerSource) async throws -> StoredLayer {
        try await write { db in
            try Self.requireDocument(db, documentID)
            if try Self.fetchLayer(db, documentID: documentID, name: name) != nil {
                throw StorageError(
                    .layerExists,
                    "The document '\(documentID)' already has a layer named '\(name)'. Delete it first or use another name."
                )
            }
            return try Self.insertLayer(db, documentID: documentID, name: name, source: source, now: Date())
        }
    }

    public func layerCreatingIfNeeded(documentID: String, name: String) async throws -> StoredLayer {
        if let existing = try await layer(documentID: documentID, name: name) { return existing }
        return try await write { db in
            try Self.requireDocument(db, documentID)
            if let existing = try Self.fetchLayer(db, documentID: documentID, name: name) { return existing }
            return try Self.insertLayer(db, documentID: documentID, name: name, source: .baseRecords, now: Date())
        }
    }

    public func deleteLayer(documentID: String, name: String) async throws -> Bool {
        try await write { db in
            for table in ["records", "client_pushes"] {
                try db.execute(
                    sql: "DELETE FROM \(table) WHERE document_id = ? AND layer = ?",
                    arguments: [documentID, name]
                )
            }
            try db.execute(sql: "DELETE FROM layers WHERE document_id = ? AND name = ?", arguments: [documentID, name])
            return db.changesCount > 0
        }
    }

    static func requireDocument(_ db: Database, _ documentID: String) throws {
        guard try Bool.fetchOne(db, sql: "SELECT 1 FROM documents WHERE id = ?", arguments: [documentID]) != nil else {
            throw StorageError(.documentNotFound, "No document has the id '\(documentID)'. Upload it first.")
        }
    }

    static func fetchLayer(_ db: Database, documentID: String, name: String) throws -> StoredLayer? {
        try Int64.fetchOne(
            db,
            sql: "SELECT revision FROM layers WHERE document_id = ? AND name = ?",
            arguments: [documentID, name]
        ).map { StoredLayer(documentID: documentID, name: name, revision: $0) }
    }

    static func requireLayer(_ db: Database, documentID: String, name: String) throws -> StoredLayer {
        if let layer = try fetchLayer(db, documentID: documentID, name: name) { return layer }
        try requireDocument(db, documentID)
        throw StorageError(
            .layerNotFound,
            "The document '\(documentID)' has no layer named '\(name)'. Create it with POST /api/documents/\(documentID)/layers."
        )
    }

    /// Inserts a layer and copies its initial records; the layer starts at revision 1 when it has
    /// records, 0 otherwise.
    @discardableResult
    static func insertLayer(
        _ db: Database,
        documentID: String,
        name: String,
        source: LayerSource,
        now: Date
    ) throws -> StoredLayer {
        let copySQL: String?
        switch source {
        case .empty:
            copySQL = nil
        case .baseRecords:
            copySQL = """
                INSERT INTO records (document_id, layer, id, kind, revision, deleted, group_name, created_by,
                    updated_by, pdf_object_id, content, updated_at)
                SELECT document_id, ?, id, kind, 1, 0, group_name, NULL, NULL, pdf_object_id, content, ?
                FROM base_records WHERE document_id = ?
                """
        case .layer(let sourceName):
            _ = try requireLayer(db, documentID: documentID, name: sourceName)
            copySQL = """
                INSERT INTO records (document_id, layer, id, kind, revision, deleted, group_name, created_by,
                    updated_by, pdf_object_id, content, updated_at, thread_root)
                SELECT document_id, ?, id, kind, 1, 0, group_name, created_by, updated_by, pdf_object_id, content, ?,
                    thread_root
                FROM records WHERE document_id = ? AND layer = ? AND deleted = 0
                """
        }
        try db.execute(
            sql: "INSERT INTO layers (document_id, name, revision) VALUES (?, ?, 0)",
            arguments: [documentID, name]
        )
        var revision: Int64 = 0
        if let copySQL {
            // Arguments: layer name, timestamp, then the source's keys.
            var copyArguments: StatementArguments = [name, now.timeIntervalSince1970]
            switch source {
            case .layer(let sourceName): copyArguments += [documentID, sourceName]
            default: copyArguments += [documentID]
            }
            try db.execute(sql: copySQL, arguments: copyArguments)
            let copied = db.changesCount
            if case .baseRecords = source {
                try indexCommentThreads(db, documentID: documentID, layer: name)
            }
            if copied > 0 {
                revision = 1
                try db.execute(
                    sql: "UPDATE layers SET revision = 1 WHERE document_id = ? AND name = ?",
                    arguments: [documentID, name]
                )
            }
        }
        return StoredLayer(documentID: documentID, name: name, revision: revision)
    }
}

extension SQLiteStorage {
    /// Fills the thread root column of a layer's comments copied from base records.
    static func indexCommentThreads(_ db: Database, documentID: String, layer: String) throws {
        let rows = try Row.fetchAll(
            db,
            sql:
                "SELECT \(SQLiteStorage.recordColumns) FROM records WHERE document_id = ? AND layer = ? AND kind = 'comment' AND deleted = 0",
            arguments: [documentID, layer]
        )
        for row in rows {
            let record = record(from: row)
            guard let root = threadRoot(of: record) else { continue }
            try db.execute(
                sql: "UPDATE records SET thread_root = ? WHERE document_id = ? AND layer = ? AND id = ?",
                arguments: [root, documentID, layer, record.id]
            )
        }
    }
}
