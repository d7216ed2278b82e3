import Foundation
import PostgresNIO

extension PostgresTransaction {
    func layers(documentID: String) async throws -> [StoredLayer] {
        try await map(
            "SELECT name, revision FROM layers WHERE document_id = \(documentID) ORDER BY name",
            "listing the layers of the document '\(documentID)'"
        ) { row in
            let (name, revision) = try row.decode((String, Int64).self)
            return StoredLayer(documentID: documentID, name: name, revision: revision)
        }
    }

    func layer(documentID: String, name: String, forUpdate: Bool) async throws -> StoredLayer? {
        // FOR UPDATE holds the row until the transaction ends: a second writer of the layer, on
        // this node or another, waits here and then reads the revision the first one committed.
        let lock = forUpdate ? " FOR UPDATE" : ""
        return try await value(
            "SELECT revision FROM layers WHERE document_id = \(documentID) AND name = \(name)\(unescaped: lock)",
            as: Int64.self,
            "reading the layer '\(name)' of the document '\(documentID)'"
        ).map { StoredLayer(documentID: documentID, name: name, revision: $0) }
    }

    func lockLayer(documentID: String, name: String) async throws -> LockedLayer? {
        try await rows(
            PreparedStatements.LockLayer(documentID: documentID, layer: name),
            "locking the layer '\(name)' of the document '\(documentID)'"
        ).first.map {
            LockedLayer(
                layer: StoredLayer(documentID: documentID, name: name, revision: $0.0), pageCount: $0.1, version: $0.2)
        }
    }

    func insertLayer(documentID: String, name: String, revision: Int64) async throws -> Bool {
        try await !rows(
            """
            INSERT INTO layers (document_id, name, revision) VALUES (\(documentID), \(name), \(revision))
            ON CONFLICT (document_id, name) DO NOTHING RETURNING 1
            """,
            "creating the layer '\(name)' of the document '\(documentID)'"
        ).isEmpty
    }

    func setRevision(documentID: String, layer: String, to revision: Int64) async throws {
        try await execute(
            "UPDATE layers SET revision = \(revision) WHERE document_id = \(documentID) AND name = \(layer)",
            "setting the revision of the layer '\(layer)' of the document '\(documentID)'"
        )
    }

    func deleteLayer(documentID: String, name: String) async throws -> Bool {
        // The foreign keys remove the layer's records and push state.
        try await !rows(
            "DELETE FROM layers WHERE document_id = \(documentID) AND name = \(name) RETURNING 1",
            "deleting the layer '\(name)' of the document '\(documentID)'"
        ).isEmpty
    }
}
