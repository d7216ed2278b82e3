import Foundation
import GRDB
import GRDBSQLite
import InstantTesting
import Logging
import Synchronization
import Testing

@testable import InstantServer

@Suite("SQLite backend", .timeLimit(.minutes(10)))
struct SQLiteBackendTests {
    /// A database of the schema before client identities keeps its clients' last push ids, under the
    /// anonymous user scope.
    @Test func exactlyOnceStateSurvivesTheClientIdentityMigration() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try await Self.database(
            in: directory, migratedUpTo: "v2-comment-threads",
            holding: """
                INSERT INTO documents (id, sha256, byte_size, pages, password_protected, created_at)
                VALUES ('d', 'x', 1, '[]', 0, 0);
                INSERT INTO layers (document_id, name, revision) VALUES ('d', '', 4);
                INSERT INTO client_pushes (document_id, layer, client_id, push_id, revision)
                VALUES ('d', '', 'client-1', 9, 4);
                """)
        let storage = try InstantStorage.sqlite(
            databasePath: path, pdfDirectory: directory.url.appendingPathComponent("pdfs"))
        let client = ClientIdentity(userID: nil, clientID: "client-1")
        #expect(try await storage.lastPushID(documentID: "d", layer: "", client: client) == 9)
        #expect(
            try await storage.lastPushID(
                documentID: "d", layer: "", client: ClientIdentity(userID: "alice", clientID: "client-1")) == nil)
    }

    /// A database of the schema before layer ids keeps every layer's records, tombstones, push
    /// state and comment threads, each under its own layer, and new writes go on from there.
    @Test func layersKeepTheirRecordsThroughTheLayerIDMigration() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try await Self.database(
            in: directory, migratedUpTo: "v4-layer-versions",
            holding: """
                INSERT INTO documents (id, sha256, byte_size, pages, password_protected, created_at)
                VALUES ('d1', '\(String(repeating: "a", count: 64))', 1, '[]', 0, 0),
                    ('d2', '\(String(repeating: "b", count: 64))', 1, '[]', 0, 0);
                INSERT INTO layers (document_id, name, revision, version)
                VALUES ('d1', '', 5, 7), ('d1', 'review', 2, 0), ('d2', '', 3, 0);
                INSERT INTO records (document_id, layer, id, kind, revision, deleted, content, updated_at, thread_root)
                VALUES ('d1', '', 'a', 'annotation', 4, 0, '{"n":1}', 10, NULL),
                    ('d1', '', 'c', 'comment', 5, 0, '{"rootId":"a"}', 11, 'a'),
                    ('d1', 'review', 'a', 'annotation', 2, 0, '{"n":2}', 12, NULL),
                    ('d2', '', 'b', 'annotation', 3, 1, '', 13, NULL);
                INSERT INTO client_pushes (document_id, layer, user_scope, client_id, push_id, revision)
                VALUES ('d1', '', '', 'client-1', 9, 5), ('d1', 'review', 'alice', 'client-1', 3, 2);
                """)
        let log = LogCapture()
        let storage = try InstantStorage.sqlite(
            databasePath: path, pdfDirectory: directory.url.appendingPathComponent("pdfs"),
            logger: Logger(label: "test", factory: { _ in log }))
        let pending = Self.migrations(after: "v4-layer-versions")
        #expect(
            log.lines == [
                "Migrating the SQLite schema; on a large database this takes a while [\(pending)]",
                "Migrated the SQLite schema [\(pending)]",
            ], "an upgrade says which migrations it runs, before and after")
        let backend = try #require(storage.backend as? SQLiteBackend)
        let freePages = try await backend.read { transaction in
            try await (transaction as? SQLiteTransaction)?.run { db in
                try Int.fetchOne(db, sql: "PRAGMA freelist_count")
            }
        }
        #expect(freePages == 0, "the old tables' pages are given back (VACUUM)")
        let logSize = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int
        #expect(logSize == 0, "the log the rebuild went through is emptied")

        func summary(_ document: String, _ layer: String) async throws -> [String] {
            try await storage.changes(documentID: document, layer: layer, since: 0).records.map {
                "\($0.id)@\($0.revision)\($0.isDeleted ? " deleted" : ""): \(String(decoding: $0.content, as: UTF8.self))"
            }
        }
        #expect(try await summary("d1", "") == [#"a@4: {"n":1}"#, #"c@5: {"rootId":"a"}"#])
        #expect(try await summary("d1", "review") == [#"a@2: {"n":2}"#])
        #expect(try await summary("d2", "") == ["b@3 deleted: "])
        #expect(try await storage.layers(documentID: "d1").map(\.revision) == [5, 2])
        let anonymous = ClientIdentity(userID: nil, clientID: "client-1")
        let alice = ClientIdentity(userID: "alice", clientID: "client-1")
        #expect(try await storage.lastPushID(documentID: "d1", layer: "", client: anonymous) == 9)
        #expect(try await storage.lastPushID(documentID: "d1", layer: "review", client: alice) == 3)
        #expect(try await storage.lastPushID(documentID: "d1", layer: "review", client: anonymous) == nil)

        // A repeated push changes nothing; deleting a thread's root deletes its comment, found
        // through the thread index; the other layers stay as they were.
        let repeated = try await storage.apply(
            [.delete(id: "a")], documentID: "d1", layer: "", push: ClientPush(client: anonymous, pushID: 9),
            onConditionFailure: .abortBatch)
        #expect(repeated.isDuplicatePush)
        let deleted = try await storage.apply(
            [.delete(id: "a")], documentID: "d1", layer: "", push: ClientPush(client: anonymous, pushID: 10),
            onConditionFailure: .abortBatch)
        #expect(deleted.revision == 6)
        #expect(Set(try await storage.changes(documentID: "d1", layer: "", since: 5).records.map(\.id)) == ["a", "c"])
        #expect(try await storage.records(documentID: "d1", layer: "", kind: nil).isEmpty)
        #expect(try await summary("d1", "review") == [#"a@2: {"n":2}"#])
        #expect(try await storage.lastPushID(documentID: "d1", layer: "", client: anonymous) == 10)

        // Deleting a document takes its layers' rows with it, and only those.
        #expect(try await storage.deleteDocument(id: "d1"))
        let left = try await backend.read { transaction in
            try await (transaction as? SQLiteTransaction)?.run { db in
                try [
                    Int.fetchOne(db, sql: "SELECT count(*) FROM records") ?? -1,
                    Int.fetchOne(db, sql: "SELECT count(*) FROM client_pushes") ?? -1,
                    Int.fetchOne(db, sql: "SELECT count(*) FROM layers") ?? -1,
                    Row.fetchAll(db, sql: "PRAGMA foreign_key_check").count,
                ]
            }
        }
        #expect(left == [1, 0, 1, 0], "d2's record and layer stay; no row points at a missing layer")

        // A database with every migration, and a new one, open without a word.
        let quiet = LogCapture()
        _ = try SQLiteBackend(path: path, logger: Logger(label: "test", factory: { _ in quiet }))
        _ = try SQLiteBackend(
            path: directory.url.appendingPathComponent("new.sqlite").path,
            logger: Logger(label: "test", factory: { _ in quiet }))
        #expect(quiet.lines.isEmpty)
    }

    /// Documents stored before their page counts were kept beside their pages are counted as the
    /// migration runs; transactions read the count, for those documents and for new ones.
    @Test func documentsKeepTheirPageCountsThroughThePageCountMigration() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try await Self.database(
            in: directory, migratedUpTo: "v5-layer-ids",
            holding: """
                INSERT INTO documents (id, sha256, byte_size, pages, password_protected, created_at)
                VALUES ('three', 'a', 1, '[{"width":612},{"width":612},{"width":595}]', 0, 0),
                    ('none', 'b', 1, '[]', 0, 0);
                INSERT INTO layers (document_id, name, revision) VALUES ('three', '', 0), ('none', '', 0);
                """)
        let backend = try SQLiteBackend(path: path)
        let counts = try await backend.write { transaction in
            let sqlite = try #require(transaction as? SQLiteTransaction)
            return [
                try await sqlite.lockLayer(documentID: "three", name: "")?.pageCount,
                try await sqlite.pageCountAndLayer(documentID: "three", name: "").pageCount,
                try await sqlite.lockLayer(documentID: "none", name: "")?.pageCount,
            ]
        }
        #expect(counts == [3, 3, 0])
        let storage = try InstantStorage.sqlite(
            databasePath: path, pdfDirectory: directory.url.appendingPathComponent("pdfs"))
        let document = StoredDocument(
            id: "new", title: nil, sourcePDFSHA256: String(repeating: "c", count: 64), byteSize: 1,
            pages: Array(repeating: PageInfo(width: 612, height: 792), count: 7), pdfID: nil,
            isPasswordProtected: false, createdAt: Date())
        _ = try await storage.backend.write { try await $0.insertDocument(document) }
        let newCount = try await storage.backend.read { transaction in
            try await transaction.pageCountAndLayer(documentID: "new", name: "").pageCount
        }
        #expect(newCount == 7)
    }

    /// A long upgrade says, every so often, that it is still running and for how long, between
    /// the line before it and the line after.
    @Test func aLongUpgradeSaysItIsStillRunning() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try await Self.database(
            in: directory, migratedUpTo: "v4-layer-versions",
            holding: """
                INSERT INTO documents (id, sha256, byte_size, pages, password_protected, created_at)
                VALUES ('d', '\(String(repeating: "a", count: 64))', 1, '[]', 0, 0);
                INSERT INTO layers (document_id, name, revision) VALUES ('d', '', 20000);
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
                INSERT INTO records (document_id, layer, id, kind, revision, deleted, content, updated_at)
                SELECT 'd', '', 'r' || i, 'annotation', i, 0, zeroblob(300), 0 FROM n;
                """)
        let log = LogCapture()
        let pool = try DatabasePool(path: path)
        try SQLiteBackend.migrate(
            pool, logger: Logger(label: "test", factory: { _ in log }), heartbeat: .milliseconds(1))
        let lines = log.lines
        let pending = Self.migrations(after: "v4-layer-versions")
        #expect(lines.first == "Migrating the SQLite schema; on a large database this takes a while [\(pending)]")
        #expect(lines.contains("Still migrating the SQLite schema [\(pending)]"), "\(lines.prefix(3))")
        #expect(lines.last == "Migrated the SQLite schema [\(pending)]")
        #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM records") } == 20_000)
    }

    /// A transaction's code runs on the thread of its connection between its statements, so a
    /// transaction of many statements does not switch threads per statement; a failing body rolls
    /// back.
    @Test func aTransactionsCodeRunsOnItsConnectionsThread() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try SQLiteBackend(path: directory.url.appendingPathComponent("instant.sqlite").path)
        let threads = try await backend.write { transaction in
            let sqlite = try #require(transaction as? SQLiteTransaction)
            var threads: [String] = []
            for _ in 0..<5 {
                threads.append(try await sqlite.run { _ in Self.currentThread() })
                threads.append(Self.currentThread())
            }
            return threads
        }
        #expect(Set(threads).count == 1, "statements and the code between them on one thread: \(threads)")

        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await backend.write { transaction in
                let sqlite = try #require(transaction as? SQLiteTransaction)
                try await sqlite.run { db in try db.execute(sql: "CREATE TABLE scratch (x)") }
                throw Refused()
            }
        }
        let exists = try await backend.read { transaction in
            try await (transaction as? SQLiteTransaction)?.run { db in try db.tableExists("scratch") }
        }
        #expect(exists == false, "the failed transaction rolled back")
    }

    /// A commit is on the disk when it returns, so that an acknowledged push survives a power
    /// loss: the writer flushes the log on every commit (`synchronous = FULL`, 2), where the pool,
    /// turning WAL mode on, would flush it only at checkpoints (NORMAL, 1).
    @Test func everyCommitIsFlushedToTheDisk() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try InstantStorage.sqlite(
            databasePath: directory.url.appendingPathComponent("instant.sqlite").path,
            pdfDirectory: directory.url.appendingPathComponent("pdfs"))
        let backend = try #require(storage.backend as? SQLiteBackend)
        let (journal, synchronous) = try await backend.write { transaction in
            try await #require(transaction as? SQLiteTransaction).run { db in
                (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"))
            }
        }
        #expect(journal == "wal")
        #expect(synchronous == 2, "the writer's synchronous setting")
    }

    /// Commits leave their pages in the log; the checkpointer copies them into the database file
    /// on a connection of its own, while the writer goes on.
    @Test func theLogIsCopiedIntoTheDatabaseFileBesideTheWriter() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("instant.sqlite").path
        let backend = try SQLiteBackend(path: path)
        let fileSize = { ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0 }
        let before = fileSize()
        // 2,048 pages in all, below the pages from which a commit would checkpoint itself.
        let blob = Data(repeating: 7, count: 64 * 4_096)
        try await backend.write { transaction in
            try await #require(transaction as? SQLiteTransaction).run { db in
                try db.execute(sql: "CREATE TABLE scratch (x BLOB)")
            }
        }
        for _ in 0..<32 {
            try await backend.write { transaction in
                try await #require(transaction as? SQLiteTransaction).run { db in
                    try db.execute(sql: "INSERT INTO scratch VALUES (?)", arguments: [blob])
                }
            }
        }
        #expect(
            try await eventually {
                backend.checkpointer.checkpointCount >= 1 && fileSize() >= before + 32 * blob.count
            },
            "checkpoints: \(backend.checkpointer.checkpointCount), file: \(fileSize()) bytes")
    }

    /// A group's records go to the database with every column as it was (nulls, an empty
    /// content, a comment's thread root), and a row the database refuses fails the transaction
    /// with SQLite's error: nothing of it is written, and the row before it is not written again
    /// in its place.
    @Test func recordRowsAreWrittenAsTheyAreOrNotAtAll() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try await Self.backendWithLayer(in: directory)
        let full = StoredRecord(
            id: "a", kind: .annotation, revision: 3, group: "g", createdBy: "ann", updatedBy: "bob", pdfObjectID: 7,
            content: Data(#"{"v":2,"text":"é"}"#.utf8), updatedAt: Date(timeIntervalSince1970: 1_700_000_000.25))
        let bare = StoredRecord(
            id: "b", kind: .comment, revision: 4, content: Data(), updatedAt: Date(timeIntervalSince1970: 1))
        let deleted = StoredRecord(
            id: "c", kind: .annotation, revision: 5, isDeleted: true, content: Data("{}".utf8),
            updatedAt: Date(timeIntervalSince1970: 2))
        try await backend.write { transaction in
            try await transaction.upsert(
                [
                    RecordRow(record: full, threadRoot: nil), RecordRow(record: bare, threadRoot: "a"),
                    RecordRow(record: deleted, threadRoot: nil),
                ], documentID: "d", layer: "")
        }
        let (stored, thread) = try await backend.read { transaction in
            (
                try await transaction.records(documentID: "d", layer: "", ids: ["a", "b", "c"]),
                try await transaction.comments(documentID: "d", layer: "", threadRoots: ["a"])
            )
        }
        #expect(stored.sorted { $0.id < $1.id } == [full, bare, deleted])
        #expect(thread == [bare])

        // SQLite refuses values longer than its length limit, lowered here for the writer's connection.
        func limitLength(to bytes: Int32) async throws {
            try await backend.write { transaction in
                try await #require(transaction as? SQLiteTransaction).run { db in
                    _ = sqlite3_limit(db.sqliteConnection, SQLITE_LIMIT_LENGTH, bytes)
                }
            }
        }
        try await limitLength(to: 1_000)
        let small = StoredRecord(id: "d", kind: .annotation, revision: 6, content: Data("{}".utf8), updatedAt: Date())
        let large = StoredRecord(
            id: "e", kind: .annotation, revision: 6, content: Data(repeating: 32, count: 2_000), updatedAt: Date())
        let refusal = await #expect(throws: StorageError.self) {
            try await backend.write { transaction in
                try await transaction.upsert(
                    [RecordRow(record: small, threadRoot: nil), RecordRow(record: large, threadRoot: nil)],
                    documentID: "d", layer: "")
            }
        }
        #expect(
            refusal?.description.contains("string or blob too big (column 10 of row 2 of the rows written)") == true,
            "\(refusal.map(String.init(describing:)) ?? "")")
        // Among several rows, the error names the row and the column: rows 1 to 8 go in one
        // statement, the ninth in one of its own.
        let many = (0..<9).map { index in
            RecordRow(
                record: index == 8
                    ? large
                    : StoredRecord(
                        id: "m\(index)", kind: .annotation, revision: 6, content: Data("{}".utf8), updatedAt: Date()),
                threadRoot: nil)
        }
        let refusalAmongMany = await #expect(throws: StorageError.self) {
            try await backend.write { transaction in try await transaction.upsert(many, documentID: "d", layer: "") }
        }
        #expect(
            refusalAmongMany?.description.contains("string or blob too big (column 10 of row 9 of the rows written)")
                == true,
            "\(refusalAmongMany.map(String.init(describing:)) ?? "")")
        try await limitLength(to: 1_000_000_000)
        let after = try await backend.read { transaction in
            try await transaction.records(documentID: "d", layer: "", ids: ["d", "e"] + many.map(\.record.id))
        }
        #expect(after.isEmpty, "the refused transactions rolled back: \(after.map(\.id))")
    }

    /// Rows go to the database several to a statement: any number of them is written whole, in
    /// order (of two rows of one record, the later is kept), and what was there is replaced.
    @Test func aGroupsRowsAreAllWrittenWhateverTheirNumber() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try await Self.backendWithLayer(in: directory)
        // Every third record a comment with every optional column set, each to a value of its own,
        // and every third a tombstone, so that each column of each row of a statement is checked.
        func row(_ id: Int, revision: Int64) -> RecordRow {
            let isComment = id % 3 == 1
            return RecordRow(
                record: StoredRecord(
                    id: "r\(id)", kind: isComment ? .comment : .annotation, revision: revision,
                    isDeleted: id % 3 == 2, group: isComment ? "g\(id)" : nil, createdBy: isComment ? "c\(id)" : nil,
                    updatedBy: isComment ? "u\(id)" : nil, pdfObjectID: isComment ? 1_000 + id : nil,
                    content: Data(#"{"n":\#(id)}"#.utf8), updatedAt: Date(timeIntervalSince1970: Double(id) / 4)),
                threadRoot: isComment ? "root" : nil)
        }
        var expected: [String: StoredRecord] = [:]
        var revision: Int64 = 0
        // Counts around each statement's number of rows, and one that uses every size; the last row
        // is the first record again, one revision on: the later row is the one kept.
        for count in [1, 7, 8, 9, 31, 32, 33, 41, 75] {
            revision += 1
            let rows = (0..<(count - 1)).map { row($0, revision: revision) } + [row(0, revision: revision + 1)]
            try await backend.write { transaction in try await transaction.upsert(rows, documentID: "d", layer: "") }
            for row in rows { expected[row.record.id] = row.record }
            let ids = Array(expected.keys)
            let stored = try await backend.read { transaction in
                try await transaction.records(documentID: "d", layer: "", ids: ids)
            }
            #expect(stored.count == expected.count, "\(count) rows")
            #expect(stored.allSatisfy { expected[$0.id] == $0 }, "\(count) rows")
            let thread = try await backend.read { transaction in
                try await transaction.comments(documentID: "d", layer: "", threadRoots: ["root"])
            }
            #expect(
                thread.map(\.id) == expected.values.filter { $0.kind == .comment }.map(\.id).sorted(),
                "the comments indexed by their thread root, \(count) rows")
        }
    }

    /// A statement whose rows were bound with a value missing is not run: in a statement of several
    /// rows, the values after it would go to the columns before theirs.
    @Test func aStatementWithAValueMissingIsNotRun() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try await Self.backendWithLayer(in: directory)
        let insert = SQLiteRowWriter.Insert("INSERT INTO revoked_tokens (jti, revoked_at) VALUES", columns: 2)
        let failure = await #expect(throws: StorageError.self) {
            try await backend.write { transaction in
                try await #require(transaction as? SQLiteTransaction).run { db in
                    // Nine rows, the first eight in one statement; the fourth's time is left out.
                    try SQLiteRowWriter.insert(["a", "b", "c", "d", "e", "f", "g", "h", "i"], db, with: insert) {
                        values, jti in
                        values.append(jti)
                        if jti != "d" { values.append(1.0) }
                    }
                }
            }
        }
        #expect(
            failure?.description.contains("15 of the statement's 16 parameters were bound") == true,
            "\(failure.map(String.init(describing:)) ?? "")")
        #expect(try await backend.read { try await $0.isTokenRevoked(id: "a") } == false, "nothing was written")
    }

    /// A backend in `directory` with a document `d` and its default layer, which records are
    /// written to directly.
    private static func backendWithLayer(in directory: TemporaryDirectory) async throws -> SQLiteBackend {
        let backend = try SQLiteBackend(path: directory.url.appendingPathComponent("instant.sqlite").path)
        try await backend.write { transaction in
            try await #require(transaction as? SQLiteTransaction).run { db in
                try db.execute(
                    sql: """
                        INSERT INTO documents (id, sha256, byte_size, pages, password_protected, created_at)
                        VALUES ('d', 'x', 1, '[]', 0, 0);
                        INSERT INTO layers (document_id, name, revision) VALUES ('d', '', 0);
                        """)
            }
        }
        return backend
    }

    private static func currentThread() -> String { "\(pthread_self())" }
}

extension SQLiteBackendTests {
    /// The migrations after `migration`, as the storage lists them when it runs them.
    static func migrations(after migration: String) -> String {
        SQLiteBackend.migrator.migrations.drop { $0 != migration }.dropFirst().joined(separator: ", ")
    }

    /// The path of a database in `directory` with the schema as of `migration`, holding what
    /// `sql` inserts: the database of an earlier version that an upgrade starts from.
    static func database(in directory: TemporaryDirectory, migratedUpTo migration: String, holding sql: String)
        async throws -> String
    {
        let path = directory.url.appendingPathComponent("instant.sqlite").path
        let queue = try DatabaseQueue(path: path)
        try SQLiteBackend.migrator.migrate(queue, upTo: migration)
        try await queue.write { db in try db.execute(sql: sql) }
        try queue.close()
        return path
    }
}

/// A log handler that keeps each message with its `migrations` metadata, for tests of what the
/// storage says.
private final class LogCapture: LogHandler, @unchecked Sendable {
    private let kept = Mutex<[String]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    var lines: [String] { kept.withLock { $0 } }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let migrations = event.metadata?["migrations"].map { " [\($0)]" } ?? ""
        kept.withLock { $0.append("\(event.message)\(migrations)") }
    }
}
