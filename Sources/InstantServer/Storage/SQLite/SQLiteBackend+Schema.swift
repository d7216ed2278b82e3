import Foundation
import GRDB
import InstantJSON

extension SQLiteBackend {
    /// The schema's migrations, in order. Never edit a registered migration: add a new one.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE documents (
                        id TEXT PRIMARY KEY NOT NULL,
                        title TEXT,
                        sha256 TEXT NOT NULL,
                        byte_size INTEGER NOT NULL,
                        pages TEXT NOT NULL,
                        pdf_id TEXT,
                        password_protected INTEGER NOT NULL,
                        created_at REAL NOT NULL
                    );
                    CREATE INDEX documents_sha256 ON documents(sha256);
                    CREATE INDEX documents_created_at ON documents(created_at, id);
                    CREATE TABLE base_records (
                        document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
                        id TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        group_name TEXT,
                        pdf_object_id INTEGER,
                        content BLOB NOT NULL,
                        PRIMARY KEY (document_id, id)
                    );
                    CREATE TABLE layers (
                        document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
                        name TEXT NOT NULL,
                        revision INTEGER NOT NULL,
                        PRIMARY KEY (document_id, name)
                    );
                    CREATE TABLE records (
                        document_id TEXT NOT NULL,
                        layer TEXT NOT NULL,
                        id TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        revision INTEGER NOT NULL,
                        deleted INTEGER NOT NULL,
                        group_name TEXT,
                        created_by TEXT,
                        updated_by TEXT,
                        pdf_object_id INTEGER,
                        content BLOB NOT NULL,
                        updated_at REAL NOT NULL,
                        PRIMARY KEY (document_id, layer, id),
                        FOREIGN KEY (document_id, layer) REFERENCES layers(document_id, name) ON DELETE CASCADE
                    );
                    CREATE INDEX records_revision ON records(document_id, layer, revision);
                    CREATE TABLE attachments (
                        document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
                        sha256 TEXT NOT NULL,
                        content_type TEXT NOT NULL,
                        data BLOB NOT NULL,
                        PRIMARY KEY (document_id, sha256)
                    );
                    CREATE TABLE client_pushes (
                        document_id TEXT NOT NULL,
                        layer TEXT NOT NULL,
                        client_id TEXT NOT NULL,
                        push_id INTEGER NOT NULL,
                        revision INTEGER NOT NULL,
                        PRIMARY KEY (document_id, layer, client_id),
                        FOREIGN KEY (document_id, layer) REFERENCES layers(document_id, name) ON DELETE CASCADE
                    );
                    CREATE TABLE revoked_tokens (
                        jti TEXT PRIMARY KEY NOT NULL,
                        revoked_at REAL NOT NULL
                    );
                    """
            )
        }
        migrator.registerMigration("v2-comment-threads") { db in
            try db.execute(
                sql: """
                    ALTER TABLE records ADD COLUMN thread_root TEXT;
                    CREATE INDEX records_thread_root ON records(document_id, layer, thread_root)
                        WHERE thread_root IS NOT NULL;
                    """
            )
            let comments = try Row.fetchAll(
                db,
                sql: "SELECT document_id, layer, id, content FROM records WHERE kind = 'comment' AND deleted = 0"
            )
            for row in comments {
                let content: Data = row["content"]
                guard let root = (try? JSONValue(parsing: content))?["rootId"]?.stringValue else { continue }
                try db.execute(
                    sql: "UPDATE records SET thread_root = ? WHERE document_id = ? AND layer = ? AND id = ?",
                    arguments: [root, row["document_id"], row["layer"], row["id"]]
                )
            }
        }
        migrator.registerMigration("v3-client-identity") { db in
            // Exactly-once state is keyed by the client id within the user of the token that sent
            // it, so that no token reaches another user's state. Rows from before did not record
            // the user; they are kept under the anonymous scope.
            try db.execute(
                sql: """
                    CREATE TABLE client_pushes_v3 (
                        document_id TEXT NOT NULL,
                        layer TEXT NOT NULL,
                        user_scope TEXT NOT NULL,
                        client_id TEXT NOT NULL,
                        push_id INTEGER NOT NULL,
                        revision INTEGER NOT NULL,
                        PRIMARY KEY (document_id, layer, user_scope, client_id),
                        FOREIGN KEY (document_id, layer) REFERENCES layers(document_id, name) ON DELETE CASCADE
                    );
                    INSERT INTO client_pushes_v3 (document_id, layer, user_scope, client_id, push_id, revision)
                        SELECT document_id, layer, '', client_id, push_id, revision FROM client_pushes;
                    DROP TABLE client_pushes;
                    ALTER TABLE client_pushes_v3 RENAME TO client_pushes;
                    """
            )
        }
        migrator.registerMigration("v4-layer-versions") { db in
            // The version of a layer's row: a number each group transaction that writes the layer
            // draws anew, so that a node can tell whether the layer is still as its last group there
            // left it (0 for a layer no group has written since it was created).
            try db.execute(sql: "ALTER TABLE layers ADD COLUMN version INTEGER NOT NULL DEFAULT 0")
        }
        migrator.registerMigration("v5-layer-ids") { db in
            // Records and push state are keyed by an integer id of their layer instead of the
            // document's id and the layer's name: every row, and every entry of the records'
            // indexes, carried both as text. The old tables are renamed out of the way, the new
            // ones made under the final names, the rows copied, the old tables dropped.
            try db.execute(
                sql: """
                    ALTER TABLE layers RENAME TO layers_v4;
                    ALTER TABLE records RENAME TO records_v4;
                    ALTER TABLE client_pushes RENAME TO client_pushes_v4;
                    DROP INDEX records_revision;
                    DROP INDEX records_thread_root;
                    CREATE TABLE layers (
                        id INTEGER PRIMARY KEY,
                        document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
                        name TEXT NOT NULL,
                        revision INTEGER NOT NULL,
                        version INTEGER NOT NULL DEFAULT 0,
                        UNIQUE (document_id, name)
                    );
                    CREATE TABLE records (
                        layer_id INTEGER NOT NULL REFERENCES layers(id) ON DELETE CASCADE,
                        id TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        revision INTEGER NOT NULL,
                        deleted INTEGER NOT NULL,
                        group_name TEXT,
                        created_by TEXT,
                        updated_by TEXT,
                        pdf_object_id INTEGER,
                        content BLOB NOT NULL,
                        updated_at REAL NOT NULL,
                        thread_root TEXT,
                        PRIMARY KEY (layer_id, id)
                    );
                    CREATE INDEX records_revision ON records(layer_id, revision);
                    CREATE INDEX records_thread_root ON records(layer_id, thread_root) WHERE thread_root IS NOT NULL;
                    CREATE TABLE client_pushes (
                        layer_id INTEGER NOT NULL REFERENCES layers(id) ON DELETE CASCADE,
                        user_scope TEXT NOT NULL,
                        client_id TEXT NOT NULL,
                        push_id INTEGER NOT NULL,
                        revision INTEGER NOT NULL,
                        PRIMARY KEY (layer_id, user_scope, client_id)
                    );
                    INSERT INTO layers (document_id, name, revision, version)
                        SELECT document_id, name, revision, version FROM layers_v4 ORDER BY document_id, name;
                    INSERT INTO records (layer_id, id, kind, revision, deleted, group_name, created_by, updated_by,
                            pdf_object_id, content, updated_at, thread_root)
                        SELECT layers.id, old.id, old.kind, old.revision, old.deleted, old.group_name, old.created_by,
                            old.updated_by, old.pdf_object_id, old.content, old.updated_at, old.thread_root
                        FROM records_v4 AS old
                        JOIN layers ON layers.document_id = old.document_id AND layers.name = old.layer;
                    INSERT INTO client_pushes (layer_id, user_scope, client_id, push_id, revision)
                        SELECT layers.id, old.user_scope, old.client_id, old.push_id, old.revision
                        FROM client_pushes_v4 AS old
                        JOIN layers ON layers.document_id = old.document_id AND layers.name = old.layer;
                    DROP TABLE client_pushes_v4;
                    DROP TABLE records_v4;
                    DROP TABLE layers_v4;
                    """
            )
        }
        migrator.registerMigration("v6-document-page-counts") { db in
            // Every group transaction reads its document's page count (records are checked against
            // the last page): counted from the pages' JSON, that cost it 0.44 ms for a document of
            // 1,000 pages, on the thread every commit of the database waits for. Documents never
            // change their pages, so the count is kept beside them.
            try db.execute(
                sql: """
                    ALTER TABLE documents ADD COLUMN page_count INTEGER NOT NULL DEFAULT 0;
                    UPDATE documents SET page_count = json_array_length(pages);
                    """)
        }
        return migrator
    }
}
