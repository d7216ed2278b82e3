import Foundation
import GRDB
import InstantJSON

extension SQLiteTransaction {
    func layers(documentID: String) async throws -> [StoredLayer] {
        try await run { db in
            try Row.fetchAll(
                db,
                sql: "SELECT name, revision FROM layers WHERE document_id = ? ORDER BY name",
                arguments: [documentID]
            ).map { StoredLayer(documentID: documentID, name: $0[0], revision: $0[1]) }
        }
    }

    func layer(documentID: String, name: String, forUpdate: Bool) async throws -> StoredLayer? {
        // Write transactions follow each other, so the row needs no lock.
        try await run { db in
            try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT revision FROM layers WHERE document_id = ? AND name = ?"),
                arguments: [documentID, name]
            ).map { StoredLayer(documentID: documentID, name: name, revision: $0) }
        }
    }

    /// The layer, its document's page count and the version of its row in one statement (one hop
    /// to GRDB's queue; the page list is counted by SQLite, not decoded). Write transactions follow
    /// each other, so the row needs no lock.
    func lockLayer(documentID: String, name: String) async throws -> LockedLayer? {
        try await run { db in
            try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT layers.revision, documents.page_count, layers.version
                        FROM layers JOIN documents ON documents.id = layers.document_id
                        WHERE layers.document_id = ? AND layers.name = ?
                        """),
                arguments: [documentID, name]
            ).map { row in
                let version: Int64 = row[2]
                return LockedLayer(
                    layer: StoredLayer(documentID: documentID, name: name, revision: row[0]), pageCount: row[1],
                    version: String(version))
            }
        }
    }

    /// The document's page count and the layer in one statement.
    func pageCountAndLayer(documentID: String, name: String) async throws -> (pageCount: Int?, layer: StoredLayer?) {
        try await run { db in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(
                        sql: """
                            SELECT documents.page_count, layers.revision FROM documents
                            LEFT JOIN layers ON layers.document_id = documents.id AND layers.name = ?
                            WHERE documents.id = ?
                            """),
                    arguments: [name, documentID])
            else { return (nil, nil) }
            let revision: Int64? = row[1]
            return (row[0], revision.map { StoredLayer(documentID: documentID, name: name, revision: $0) })
        }
    }

    func insertLayer(documentID: String, name: String, revision: Int64) async throws -> Bool {
        try await run { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO layers (document_id, name, revision) VALUES (?, ?, ?)",
                arguments: [documentID, name, revision]
            )
            return db.changesCount > 0
        }
    }

    func setRevision(documentID: String, layer: String, to revision: Int64) async throws {
        try await run { db in
            try db.cachedStatement(sql: "UPDATE layers SET revision = ? WHERE document_id = ? AND name = ?")
                .execute(arguments: [revision, documentID, layer])
        }
    }

    func deleteLayer(documentID: String, name: String) async throws -> Bool {
        try await run { db in
            for table in ["records", "client_pushes"] {
                try db.execute(
                    sql: "DELETE FROM \(table) WHERE layer_id = \(Self.layerIDOf)", arguments: [documentID, name])
            }
            try db.execute(sql: "DELETE FROM layers WHERE document_id = ? AND name = ?", arguments: [documentID, name])
            return db.changesCount > 0
        }
    }

    func copyLiveRecords(documentID: String, from source: String, to target: String, revision: Int64, at time: Date)
        async throws -> Int
    {
        try await run { db in
            try db.execute(
                sql: """
                    INSERT INTO records (layer_id, id, kind, revision, deleted, group_name, created_by,
                        updated_by, pdf_object_id, content, updated_at, thread_root)
                    SELECT \(Self.layerIDOf), id, kind, ?, 0, group_name, created_by, updated_by, pdf_object_id, content,
                        ?, thread_root
                    FROM records WHERE layer_id = \(Self.layerIDOf) AND deleted = 0
                    """,
                arguments: [documentID, target, revision, time.timeIntervalSince1970, documentID, source]
            )
            return db.changesCount
        }
    }

    func lastPushID(documentID: String, layer: String, client: ClientIdentity) async throws -> Int64? {
        try await run { db in try Self.lastPushID(db, documentID: documentID, layer: layer, client: client) }
    }

    /// The last push ids of several clients, in one statement (the clients as one JSON array of
    /// `[userScope, clientID]` pairs, each looked up in the primary key): a group's clients cost a
    /// statement each before.
    func lastPushIDs(documentID: String, layer: String, clients: [ClientIdentity]) async throws
        -> [ClientIdentity: Int64]
    {
        guard !clients.isEmpty else { return [:] }
        let pairs = JSONValue.array(clients.map { [.string($0.userScope), .string($0.clientID)] }).serializedString()
        return try await run { db in
            let rows = try Row.fetchCursor(
                db.cachedStatement(
                    sql: """
                        SELECT user_scope, client_id, push_id FROM client_pushes
                        WHERE layer_id = \(Self.layerIDOf) AND (user_scope, client_id) IN (
                            SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?))
                        """),
                arguments: [documentID, layer, pairs])
            var stored: [[String]: Int64] = [:]
            while let row = try rows.next() { stored[[row[0], row[1]]] = row[2] }
            // Keyed by the clients as asked for (a scope of "" is the anonymous user's).
            var found: [ClientIdentity: Int64] = [:]
            for client in clients {
                if let pushID = stored[[client.userScope, client.clientID]] { found[client] = pushID }
            }
            return found
        }
    }

    func setLastPushID(_ pushID: Int64, documentID: String, layer: String, client: ClientIdentity, revision: Int64)
        async throws
    {
        try await run { db in
            try Self.setLastPushID(
                with: SQLiteRowWriter(db, sql: Self.setLastPushIDSQL), pushID,
                layerID: Self.layerID(db, documentID: documentID, layer: layer), client: client, revision: revision)
        }
    }

    /// The records, the revision and the push ids of a group, and a new version of the layer's row
    /// (a random number other than 0); there are no other nodes to announce the events to.
    func finishCommits(
        documentID: String, layer: String, writing rows: [RecordRow], revision: Int64?, pushes: [StoredPush],
        announcing events: [StorageEvent]
    ) async throws -> String? {
        guard !rows.isEmpty || revision != nil || !pushes.isEmpty else { return nil }
        let version = Int64.random(in: 1...Int64.max)
        try await run { db in
            // The layer's id looked up once for the whole group; everything bound straight to
            // SQLite: these run for every group.
            let layerID = try Self.layerID(db, documentID: documentID, layer: layer)
            try Self.upsert(rows, layerID: layerID, db)
            try SQLiteRowWriter(db, sql: "UPDATE layers SET revision = coalesce(?, revision), version = ? WHERE id = ?")
                .write { values in
                    values.append(revision)
                    values.append(version)
                    values.append(layerID)
                }
            guard !pushes.isEmpty else { return }
            let writer = try SQLiteRowWriter(db, sql: Self.setLastPushIDSQL)
            for push in pushes {
                try Self.setLastPushID(
                    with: writer, push.pushID, layerID: layerID, client: push.client, revision: push.revision)
            }
        }
        return String(version)
    }

    private static func lastPushID(_ db: Database, documentID: String, layer: String, client: ClientIdentity) throws
        -> Int64?
    {
        try Int64.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT push_id FROM client_pushes
                    WHERE layer_id = \(layerIDOf) AND user_scope = ? AND client_id = ?
                    """
            ),
            arguments: [documentID, layer, client.userScope, client.clientID]
        )
    }

    private static func setLastPushID(
        with writer: SQLiteRowWriter, _ pushID: Int64, layerID: Int64, client: ClientIdentity, revision: Int64
    ) throws {
        try writer.write { values in
            values.append(layerID)
            values.append(client.userScope)
            values.append(client.clientID)
            values.append(pushID)
            values.append(revision)
        }
    }

    /// Sets a client's last push id (``setLastPushID(with:_:layerID:client:revision:)``).
    private static let setLastPushIDSQL = """
        INSERT OR REPLACE INTO client_pushes (layer_id, user_scope, client_id, push_id, revision)
        VALUES (?, ?, ?, ?, ?)
        """

    /// The id that keys a layer's records and push state (migration `v5-layer-ids`): one lookup
    /// in the layers' unique key, so that the rows written after it carry an integer.
    /// - Throws: ``StorageError/Code/layerNotFound``.
    static func layerID(_ db: Database, documentID: String, layer: String) throws -> Int64 {
        guard
            let id = try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT id FROM layers WHERE document_id = ? AND name = ?"),
                arguments: [documentID, layer])
        else {
            throw StorageError(
                .layerNotFound,
                "The layer '\(layer)' of the document '\(documentID)' does not exist; create it before writing to it.")
        }
        return id
    }

    /// A layer's id in a statement, from its document's id and its name (two parameters, in that
    /// order). SQLite computes the subquery once per statement.
    static let layerIDOf = "(SELECT id FROM layers WHERE document_id = ? AND name = ?)"
}
