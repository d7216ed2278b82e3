import GRDB

extension LocalStore {
    /// The store's migrations. Never edit a registered migration: add a new one.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                    CREATE TABLE pdfs (
                        document_id TEXT PRIMARY KEY NOT NULL,
                        file_name TEXT NOT NULL,
                        byte_size INTEGER NOT NULL
                    );
                    CREATE TABLE layers (
                        document_id TEXT NOT NULL,
                        name TEXT NOT NULL,
                        user_id TEXT,
                        jwt TEXT,
                        default_group TEXT,
                        group_override TEXT,
                        revision INTEGER NOT NULL,
                        next_push_id INTEGER NOT NULL DEFAULT 1,
                        PRIMARY KEY (document_id, name)
                    );
                    CREATE TABLE records (
                        document_id TEXT NOT NULL,
                        layer TEXT NOT NULL,
                        id TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        server_revision INTEGER,
                        server_content BLOB,
                        server_group TEXT,
                        created_by TEXT,
                        updated_by TEXT,
                        pending INTEGER NOT NULL DEFAULT 0,
                        local_version INTEGER NOT NULL DEFAULT 0,
                        local_content BLOB,
                        local_group TEXT,
                        PRIMARY KEY (document_id, layer, id),
                        FOREIGN KEY (document_id, layer) REFERENCES layers(document_id, name) ON DELETE CASCADE
                    );
                    CREATE INDEX records_pending ON records(document_id, layer) WHERE pending = 1;
                    CREATE TABLE pushes (
                        document_id TEXT NOT NULL,
                        layer TEXT NOT NULL,
                        push_id INTEGER NOT NULL,
                        base_revision INTEGER NOT NULL,
                        changes BLOB NOT NULL,
                        PRIMARY KEY (document_id, layer),
                        FOREIGN KEY (document_id, layer) REFERENCES layers(document_id, name) ON DELETE CASCADE
                    );
                    """
            )
        }
        migrator.registerMigration("v2-content-versions") { db in
            // Layers written before this migration hold records whose Instant JSON may be of format
            // version 1 (content version 1); `needs_refetch` marks layers whose records lack the
            // permission metadata (group, creator) of collaboration permissions.
            try db.execute(
                sql: """
                    ALTER TABLE layers ADD COLUMN content_version INTEGER NOT NULL DEFAULT 1;
                    ALTER TABLE layers ADD COLUMN needs_refetch INTEGER NOT NULL DEFAULT 0;
                    """
            )
        }
        migrator.registerMigration("v3-attachments") { db in
            try db.execute(
                sql: """
                    CREATE TABLE attachments (
                        document_id TEXT NOT NULL,
                        id TEXT NOT NULL,
                        content_type TEXT NOT NULL,
                        uploaded INTEGER NOT NULL DEFAULT 0,
                        PRIMARY KEY (document_id, id)
                    );
                    """
            )
        }
        migrator.registerMigration("v4-no-stored-tokens") { db in
            // Authentication is kept in memory only: tokens stored by older versions are erased
            // (the `jwt` column stays, unused, as migrations never rewrite tables).
            try db.execute(sql: "UPDATE layers SET jwt = NULL")
        }
        migrator.registerMigration("v5-explicit-groups") { db in
            // A group override or a record's group may be "no group", which NULL alone cannot
            // tell from "not set".
            try db.execute(
                sql: """
                    ALTER TABLE layers ADD COLUMN group_override_set INTEGER NOT NULL DEFAULT 0;
                    UPDATE layers SET group_override_set = 1 WHERE group_override IS NOT NULL;
                    ALTER TABLE records ADD COLUMN local_group_set INTEGER NOT NULL DEFAULT 0;
                    UPDATE records SET local_group_set = 1 WHERE local_group IS NOT NULL;
                    """
            )
        }
        return migrator
    }
}
