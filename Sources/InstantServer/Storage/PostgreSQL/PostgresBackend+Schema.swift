import Foundation
import PostgresNIO

extension PostgresBackend {
    /// One version of the schema: its name (stored in `schema_migrations`) and its statements.
    struct Migration: Sendable {
        var version: String
        var statements: [String]
    }

    /// The class id of the advisory lock that migrations take (`pg_advisory_xact_lock(class, 0)`).
    static let migrationLockClass: Int32 = 0x696E_7374
    /// The class id of the advisory locks of ``StorageTransaction/lockContent(sha256:)``
    /// (`pg_advisory_xact_lock(class, hashtext(sha256))`).
    static let contentLockClass: Int32 = 0x696E_7375

    /// The schema's migrations, in order. A migration that shipped is never edited (databases
    /// out there already ran it): change the schema with a new migration at the end.
    ///
    /// The tables mean what SQLite's do. Ids and names sort by bytes (`COLLATE "C"`) as in SQLite;
    /// times are seconds since 1970 as `double precision`, which keeps a `Date` exactly.
    static let migrations: [Migration] = [
        Migration(
            version: "1-initial",
            statements: [
                """
                CREATE TABLE documents (
                    id TEXT COLLATE "C" PRIMARY KEY,
                    title TEXT COLLATE "C",
                    sha256 TEXT NOT NULL,
                    byte_size BIGINT NOT NULL,
                    pages JSONB NOT NULL,
                    pdf_id JSONB,
                    password_protected BOOLEAN NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL
                )
                """,
                "CREATE INDEX documents_sha256 ON documents (sha256)",
                "CREATE INDEX documents_created_at ON documents (created_at, id)",
                "CREATE INDEX documents_title ON documents (title, id)",
                """
                CREATE TABLE base_records (
                    document_id TEXT COLLATE "C" NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
                    id TEXT COLLATE "C" NOT NULL,
                    kind TEXT NOT NULL,
                    group_name TEXT,
                    pdf_object_id BIGINT,
                    content BYTEA NOT NULL,
                    PRIMARY KEY (document_id, id)
                )
                """,
                """
                CREATE TABLE layers (
                    document_id TEXT COLLATE "C" NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
                    name TEXT COLLATE "C" NOT NULL,
                    revision BIGINT NOT NULL,
                    PRIMARY KEY (document_id, name)
                )
                """,
                """
                CREATE TABLE records (
                    document_id TEXT COLLATE "C" NOT NULL,
                    layer TEXT COLLATE "C" NOT NULL,
                    id TEXT COLLATE "C" NOT NULL,
                    kind TEXT NOT NULL,
                    revision BIGINT NOT NULL,
                    deleted BOOLEAN NOT NULL,
                    group_name TEXT,
                    created_by TEXT,
                    updated_by TEXT,
                    pdf_object_id BIGINT,
                    content BYTEA NOT NULL,
                    updated_at DOUBLE PRECISION NOT NULL,
                    thread_root TEXT COLLATE "C",
                    PRIMARY KEY (document_id, layer, id),
                    FOREIGN KEY (document_id, layer) REFERENCES layers (document_id, name) ON DELETE CASCADE
                )
                """,
                "CREATE INDEX records_revision ON records (document_id, layer, revision)",
                """
                CREATE INDEX records_thread_root ON records (document_id, layer, thread_root)
                    WHERE thread_root IS NOT NULL
                """,
                """
                CREATE TABLE client_pushes (
                    document_id TEXT COLLATE "C" NOT NULL,
                    layer TEXT COLLATE "C" NOT NULL,
                    user_scope TEXT COLLATE "C" NOT NULL,
                    client_id TEXT COLLATE "C" NOT NULL,
                    push_id BIGINT NOT NULL,
                    revision BIGINT NOT NULL,
                    PRIMARY KEY (document_id, layer, user_scope, client_id),
                    FOREIGN KEY (document_id, layer) REFERENCES layers (document_id, name) ON DELETE CASCADE
                )
                """,
                """
                CREATE TABLE attachments (
                    document_id TEXT COLLATE "C" NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
                    sha256 TEXT NOT NULL,
                    content_type TEXT NOT NULL,
                    data BYTEA NOT NULL,
                    PRIMARY KEY (document_id, sha256)
                )
                """,
                // Attachments and PDFs are compressed already: kept out of line and uncompressed,
                // a range of them is read without reading the rest.
                "ALTER TABLE attachments ALTER COLUMN data SET STORAGE EXTERNAL",
                """
                CREATE TABLE revoked_tokens (
                    jti TEXT PRIMARY KEY,
                    revoked_at DOUBLE PRECISION NOT NULL
                )
                """,
                """
                CREATE TABLE pdf_blobs (
                    sha256 TEXT PRIMARY KEY,
                    data BYTEA NOT NULL
                )
                """,
                "ALTER TABLE pdf_blobs ALTER COLUMN data SET STORAGE EXTERNAL",
            ]
        ),
        // Every group transaction reads its document's page count (records are checked against the
        // last page); counted from the pages, it read their whole JSON (stored out of line,
        // compressed, once a document has a few dozen pages) on the path every commit of the layer
        // waits for. The count is kept beside the pages, computed by the database as a row is
        // written, so that the documents a node of an earlier version stores during a rolling
        // upgrade have theirs too.
        Migration(
            version: "2-document-page-counts",
            statements: [
                """
                ALTER TABLE documents
                ADD COLUMN page_count INTEGER NOT NULL GENERATED ALWAYS AS (jsonb_array_length(pages)) STORED
                """
            ]
        ),
    ]

    /// Brings the database's schema up to date: applies, in order and in one transaction, the
    /// migrations it has not applied yet. Nodes that start at the same time wait for each other
    /// (an advisory lock), so each migration runs once. Call it at startup, while ``run()`` runs.
    /// - Returns: The versions applied now (none when the schema was up to date).
    @discardableResult
    public func migrate() async throws -> [String] {
        try await migrate(upTo: nil)
    }

    /// ``migrate()`` up to the migration `version` (all of them when `nil`), for tests of a
    /// migration on a database that an earlier schema filled.
    func migrate(upTo version: String?) async throws -> [String] {
        var wanted = Self.migrations[...]
        if let version {
            guard let last = Self.migrations.firstIndex(where: { $0.version == version }) else {
                preconditionFailure("No migration of the PostgreSQL schema is named '\(version)'.")
            }
            wanted = Self.migrations[...last]
        }
        return try await transaction(begin: "BEGIN") { [wanted] transaction in
            try await transaction.execute(
                "SELECT pg_advisory_xact_lock(\(Self.migrationLockClass), 0)",
                "waiting for other nodes' migrations"
            )
            try await transaction.execute(
                """
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version TEXT PRIMARY KEY,
                    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
                )
                """,
                "creating the table of schema migrations"
            )
            let applied = Set(
                try await transaction.map("SELECT version FROM schema_migrations", "reading the schema migrations") {
                    try $0.decode(String.self)
                }
            )
            let known = Set(Self.migrations.map(\.version))
            if let unknown = applied.subtracting(known).sorted().first {
                self.logger.warning(
                    "The PostgreSQL database has the migration '\(unknown)', which this server does not know: a newer server migrated it."
                )
            }
            var versions: [String] = []
            for migration in wanted where !applied.contains(migration.version) {
                for statement in migration.statements {
                    try await transaction.execute(
                        PostgresQuery(unsafeSQL: statement),
                        "applying the schema migration \(migration.version)"
                    )
                }
                try await transaction.execute(
                    "INSERT INTO schema_migrations (version) VALUES (\(migration.version))",
                    "recording the schema migration \(migration.version)"
                )
                versions.append(migration.version)
            }
            return versions
        }
    }
}
