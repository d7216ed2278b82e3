import Foundation
import InstantJSON
import InstantTesting
import NIOConcurrencyHelpers
import PostgresNIO
import Testing

@testable import InstantServer

@Suite("PostgreSQL backend", .postgres, .timeLimit(.minutes(10)))
struct PostgresBackendTests {
    static let time = Date(timeIntervalSince1970: 1_700_000_000.123_456_7)

    static func document(id: String, title: String? = nil, sha256: String = String(repeating: "a", count: 64))
        -> StoredDocument
    {
        StoredDocument(
            id: id,
            title: title,
            sourcePDFSHA256: sha256,
            byteSize: 1234,
            pages: [PageInfo(width: 612, height: 792), PageInfo(width: 595.28, height: 841.89, rotation: 90)],
            pdfID: DocumentPDFID(permanent: "cGVybQ==", changing: "Y2hhbmdl"),
            isPasswordProtected: false,
            createdAt: time
        )
    }

    static func record(
        _ id: String,
        kind: RecordKind = .annotation,
        revision: Int64,
        deleted: Bool = false,
        content: String? = nil
    ) -> StoredRecord {
        StoredRecord(
            id: id,
            kind: kind,
            revision: revision,
            isDeleted: deleted,
            group: deleted ? nil : "group",
            createdBy: "alice",
            updatedBy: deleted ? nil : "bob",
            pdfObjectID: id.hasPrefix("pdf") ? 42 : nil,
            content: deleted ? Data() : Data((content ?? #"{"id":"\#(id)"}"#).utf8),
            updatedAt: time.addingTimeInterval(Double(revision))
        )
    }

    static func row(_ record: StoredRecord, threadRoot: String? = nil) -> RecordRow {
        RecordRow(record: record, threadRoot: threadRoot)
    }

    /// A document `d` with a layer `""` at `revision`.
    /// How many of the database's sessions wait for a lock.
    static func lockWaiters(_ backend: PostgresBackend) async throws -> Int {
        try await backend.withConnection { connection in
            try await connection.value(
                """
                SELECT count(*) FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock'
                """,
                as: Int.self,
                "looking for waiting transactions"
            ) ?? 0
        }
    }

    /// Runs `body` on a PostgreSQL of its own that counts statements and their plans
    /// (`pg_stat_statements`), with the layer of ``makeLayer(_:revision:)``.
    /// Starts counting a group's statements from zero (``statementCounts(_:)``).
    static func resetStatementCounts(_ backend: PostgresBackend) async throws {
        try await backend.readStatement { transaction in
            try await (transaction as! PostgresTransaction).execute(
                "SELECT pg_stat_statements_reset()", "resetting the count")
        }
    }

    /// The statements run since the last reset (``withStatementCounts(_:)``), by what they are:
    /// `BEGIN`, `lock`, `read`, `write` and `COMMIT` of groups; the others (another node's lock
    /// held by a test, the pool's keep-alives) are left out.
    static func statementCounts(_ backend: PostgresBackend) async throws -> [String: Int64] {
        try await backend.readStatement { transaction in
            let rows = try await (transaction as! PostgresTransaction).map(
                """
                SELECT query, calls FROM pg_stat_statements
                WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                    AND query NOT LIKE '%pg_stat_statements%'
                """, "reading the count"
            ) { try $0.decode((String, Int64).self) }
            var counted: [String: Int64] = [:]
            for (query, calls) in rows {
                let kind =
                    switch query {
                    case let sql where sql.contains("FOR UPDATE OF layers"): "lock"
                    case let sql where sql.contains("UNION ALL"): "read"
                    case let sql where sql.hasPrefix("WITH revised AS"): "write"
                    case "BEGIN", "COMMIT": query
                    default: "other"
                    }
                counted[kind, default: 0] += calls
            }
            counted["other"] = nil
            return counted
        }
    }

    static func withStatementCounts(_ body: (PostgresBackend, InstantStorage) async throws -> Void) async throws {
        let server = try await PostgresTestServer.start(settings: [
            "shared_preload_libraries": "pg_stat_statements", "pg_stat_statements.track_planning": "on",
        ])
        defer { server.stop() }
        try await withPostgresBackend(on: server) { backend in
            try await makeLayer(backend)
            try await backend.readStatement { transaction in
                try await (transaction as! PostgresTransaction).execute(
                    "CREATE EXTENSION pg_stat_statements", "counting statements")
            }
            try await body(backend, InstantStorage(backend: backend, pdfs: PostgresBlobStore(backend: backend)))
        }
    }

    static func makeLayer(_ backend: PostgresBackend, revision: Int64 = 0) async throws {
        try await backend.write { transaction throws in
            #expect(try await transaction.insertDocument(Self.document(id: "d")))
            #expect(try await transaction.insertLayer(documentID: "d", name: "", revision: revision))
        }
    }

    // MARK: Schema

    @Test func migrationsRunTwiceAreANoOp() async throws {
        try await withPostgresBackend { backend in
            #expect(try await backend.migrate().isEmpty)
            let versions = try await backend.read { transaction throws in
                try await (transaction as! PostgresTransaction).map(
                    "SELECT version FROM schema_migrations", "reading the migrations"
                ) { try $0.decode(String.self) }
            }
            #expect(versions == PostgresBackend.migrations.map(\.version))
        }
    }

    /// Documents stored before their page counts were kept beside their pages are counted as the
    /// migration runs; transactions read the count, for those documents and for new ones, which the
    /// database counts as they are stored (an insert names no count, as a node of an earlier
    /// version does not during a rolling upgrade).
    @Test func documentsKeepTheirPageCountsThroughThePageCountMigration() async throws {
        let server = try await PostgresTestServer.shared()
        let backend = try PostgresBackend(
            configuration: .init(url: try await server.makeDatabase()), logger: quietLogger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await backend.run() }
            defer { group.cancelAll() }
            #expect(try await backend.migrate(upTo: "1-initial") == ["1-initial"])
            try await backend.write { transaction throws in
                try await (transaction as! PostgresTransaction).execute(
                    """
                    INSERT INTO documents (id, sha256, byte_size, pages, password_protected, created_at)
                    VALUES ('three', 'a', 1, '[{"width": 612}, {"width": 612}, {"width": 595}]', false, 0),
                        ('none', 'b', 1, '[]', false, 0)
                    """, "storing documents of the first schema")
                for document in ["three", "none"] {
                    #expect(try await transaction.insertLayer(documentID: document, name: "", revision: 0))
                }
            }
            #expect(try await backend.migrate() == ["2-document-page-counts"])
            try await backend.write { transaction throws in
                #expect(try await transaction.insertDocument(Self.document(id: "new")))
                let counts = [
                    try await transaction.lockLayer(documentID: "three", name: "")?.pageCount,
                    try await transaction.pageCountAndLayer(documentID: "three", name: "").pageCount,
                    try await transaction.lockLayer(documentID: "none", name: "")?.pageCount,
                    try await transaction.pageCountAndLayer(documentID: "new", name: "").pageCount,
                ]
                #expect(counts == [3, 3, 0, Self.document(id: "new").pages.count])
            }
        }
    }

    @Test func nodesStartingTogetherMigrateOnce() async throws {
        let server = try await PostgresTestServer.shared()
        let url = try await server.makeDatabase()
        let backends = try (0..<3).map { _ in try PostgresBackend(configuration: .init(url: url), logger: quietLogger) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for backend in backends { group.addTask { await backend.run() } }
            defer { group.cancelAll() }
            let applied = try await withThrowingTaskGroup(of: [String].self) { migrations in
                for backend in backends { migrations.addTask { try await backend.migrate() } }
                return try await migrations.reduce(into: []) { $0 += $1 }
            }
            #expect(applied == PostgresBackend.migrations.map(\.version))
        }
    }

    @Test func connectsThroughAUnixSocket() async throws {
        let server = try await PostgresTestServer.shared()
        let database = try #require(URL(string: try await server.makeDatabase())).lastPathComponent
        var configuration = try PostgresBackend.Configuration(url: server.socketURL(database: database))
        #expect(configuration.endpoint == .unixSocket(directory: server.directory.path, port: server.port))
        // The first check opens the pool's first connection, which on a machine busy with the
        // other tests can take longer than the default 5 s; the test is about the socket.
        configuration.healthCheckTimeout = .seconds(60)
        let backend = try PostgresBackend(configuration: configuration, logger: quietLogger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await backend.run() }
            defer { group.cancelAll() }
            try await backend.checkHealth()
            #expect(try await backend.migrate() == PostgresBackend.migrations.map(\.version))
        }
    }

    @Test func blobAndAttachmentColumnsAreStoredOutOfLineUncompressed() async throws {
        try await withPostgresBackend { backend in
            let storage = try await backend.read { transaction throws in
                try await (transaction as! PostgresTransaction).map(
                    """
                    SELECT attrelid::regclass::text, attstorage::text FROM pg_attribute
                    WHERE attname = 'data' AND attrelid IN ('pdf_blobs'::regclass, 'attachments'::regclass)
                    ORDER BY 1
                    """,
                    "reading the storage of the data columns"
                ) { try $0.decode((String, String).self) }
            }
            #expect(storage.map(\.0) == ["attachments", "pdf_blobs"])
            #expect(storage.map(\.1) == ["e", "e"])
        }
    }

    // MARK: Documents and layers

    @Test func documentsRoundTripListAndConflict() async throws {
        try await withPostgresBackend { backend in
            let sha = String(repeating: "b", count: 64)
            try await backend.write { transaction throws in
                #expect(try await transaction.insertDocument(Self.document(id: "a", title: "Alpha_1")))
                #expect(try await transaction.insertDocument(Self.document(id: "b", title: "beta", sha256: sha)))
                #expect(try await transaction.insertDocument(Self.document(id: "c")))
                #expect(try await transaction.insertDocument(Self.document(id: "a", title: "Other")) == false)
            }
            try await backend.read { transaction throws in
                #expect(try await transaction.document(id: "a") == Self.document(id: "a", title: "Alpha_1"))
                #expect(try await transaction.document(id: "missing") == nil)
                #expect(try await transaction.isPDFReferenced(sha256: sha))
                #expect(try await transaction.isPDFReferenced(sha256: String(repeating: "c", count: 64)) == false)

                var query = DocumentQuery()
                query.order = .title
                query.ascending = true
                var listing = try await transaction.documents(query)
                #expect(listing.documents.map(\.id) == ["c", "a", "b"])
                #expect(listing.totalCount == 3)
                query.ascending = false
                query.limit = 1
                query.offset = 1
                listing = try await transaction.documents(query)
                #expect(listing.documents.map(\.id) == ["a"])
                #expect(listing.totalCount == 3)
                query = DocumentQuery()
                query.titleFilter = "ALPHA_"
                #expect(try await transaction.documents(query).documents.map(\.id) == ["a"])
                query.titleFilter = "%"
                #expect(try await transaction.documents(query).totalCount == 0)
            }
        }
    }

    @Test func layersAndCascadingDeletes() async throws {
        try await withPostgresBackend { backend in
            try await Self.makeLayer(backend, revision: 3)
            try await backend.write { transaction throws in
                #expect(try await transaction.insertLayer(documentID: "d", name: "", revision: 9) == false)
                #expect(try await transaction.insertLayer(documentID: "d", name: "b", revision: 0))
                try await transaction.setRevision(documentID: "d", layer: "b", to: 5)
                try await transaction.upsert([Self.row(Self.record("r", revision: 5))], documentID: "d", layer: "b")
                try await transaction.setLastPushID(
                    7, documentID: "d", layer: "b", client: ClientIdentity(userID: nil, clientID: "c"), revision: 5)
                try await transaction.insertBaseRecords(
                    documentID: "d", [RecordWrite(id: "pdf1", kind: .annotation, content: Data("{}".utf8))])
                try await transaction.insertAttachment(
                    documentID: "d", StoredAttachment(sha256: "s", contentType: "image/png", data: Data([1, 2])))
            }
            try await backend.read { transaction throws in
                #expect(
                    try await transaction.layers(documentID: "d") == [
                        StoredLayer(documentID: "d", name: "", revision: 3),
                        StoredLayer(documentID: "d", name: "b", revision: 5),
                    ])
                #expect(try await transaction.layer(documentID: "d", name: "x", forUpdate: false) == nil)
            }
            #expect(try await backend.write { try await $0.deleteLayer(documentID: "d", name: "b") })
            #expect(try await backend.write { try await $0.deleteLayer(documentID: "d", name: "b") } == false)
            try await backend.write { transaction throws in
                // The layer's records and push state went with it.
                #expect(try await transaction.insertLayer(documentID: "d", name: "b", revision: 0))
                #expect(try await transaction.liveRecords(documentID: "d", layer: "b", kind: nil).isEmpty)
                #expect(
                    try await transaction.lastPushID(
                        documentID: "d", layer: "b", client: ClientIdentity(userID: nil, clientID: "c")) == nil)
            }
            #expect(try await backend.write { try await $0.deleteDocument(id: "d") })
            #expect(try await backend.write { try await $0.deleteDocument(id: "d") } == false)
            let remaining = try await backend.read { transaction throws in
                try await (transaction as! PostgresTransaction).map(
                    """
                    SELECT (SELECT count(*) FROM layers) + (SELECT count(*) FROM records)
                        + (SELECT count(*) FROM base_records) + (SELECT count(*) FROM attachments)
                        + (SELECT count(*) FROM client_pushes)
                    """,
                    "counting rows"
                ) { try $0.decode(Int.self) }
            }
            #expect(remaining == [0])
        }
    }

    /// A transaction that hangs (a client lost mid-transaction) fails after the transaction time
    /// limit, and PostgreSQL ends its session, so the layer it locked is free again for the others.
    @Test func aHungTransactionFailsAndReleasesItsLocks() async throws {
        // The setup and the next writer use the default limit; only the hung writer's backend has a
        // short one, so a machine busy with other tests cannot time out the setup.
        try await withPostgresBackend { backend in
            try await Self.makeLayer(backend, revision: 5)
            var configuration = backend.configuration
            configuration.transactionTimeout = .seconds(2)
            let hanging = try PostgresBackend(configuration: configuration, logger: quietLogger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await hanging.run() }
                defer { group.cancelAll() }
                let (never, _) = AsyncStream.makeStream(of: Void.self)
                await #expect {
                    try await hanging.write { transaction throws in
                        _ = try await transaction.layer(documentID: "d", name: "", forUpdate: true)
                        for await _ in never {}
                    }
                } throws: { error in
                    (error as? StorageError)?.message.contains("did not finish within") == true
                }
            }
            // The next writer gets the layer once the abandoned transaction ended (cancelled, or its
            // session ended by PostgreSQL).
            let revision = try await backend.write { transaction throws in
                let layer = try #require(try await transaction.layer(documentID: "d", name: "", forUpdate: true))
                try await transaction.setRevision(documentID: "d", layer: "", to: layer.revision + 1)
                return layer.revision + 1
            }
            #expect(revision == 6)
        }
    }

    @Test func concurrentWritersOfALayerTakeTurns() async throws {
        try await withPostgresBackend { backend in
            try await Self.makeLayer(backend, revision: 5)
            let (firstLocked, lockedSignal) = AsyncStream.makeStream(of: Void.self)
            let (release, releaseSignal) = AsyncStream.makeStream(of: Void.self)
            let first = Task {
                try await backend.write { transaction throws in
                    let layer = try #require(try await transaction.layer(documentID: "d", name: "", forUpdate: true))
                    lockedSignal.yield()
                    for await _ in release { break }
                    try await transaction.setRevision(documentID: "d", layer: "", to: layer.revision + 1)
                    return layer.revision
                }
            }
            for await _ in firstLocked { break }
            let second = Task {
                try await backend.write { transaction throws in
                    let layer = try #require(try await transaction.layer(documentID: "d", name: "", forUpdate: true))
                    try await transaction.setRevision(documentID: "d", layer: "", to: layer.revision + 1)
                    return layer.revision
                }
            }
            // The second writer waits for the first one's row lock.
            #expect(try await eventually { try await Self.lockWaiters(backend) == 1 })
            releaseSignal.yield()
            #expect(try await first.value == 5)
            #expect(try await second.value == 6)
            #expect(
                try await backend.read { try await $0.layer(documentID: "d", name: "", forUpdate: false) }?.revision
                    == 7)

            // Many at once: none lost.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        try await backend.write { transaction throws in
                            let layer = try #require(
                                try await transaction.layer(documentID: "d", name: "", forUpdate: true))
                            try await transaction.setRevision(documentID: "d", layer: "", to: layer.revision + 1)
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(
                try await backend.read { try await $0.layer(documentID: "d", name: "", forUpdate: false) }?.revision
                    == 27)
        }
    }

    // MARK: Records

    @Test func recordsCommentsAndChanges() async throws {
        try await withPostgresBackend { backend in
            try await Self.makeLayer(backend)
            let comment1 = Self.record("c1", kind: .comment, revision: 2)
            let comment2 = Self.record("c2", kind: .comment, revision: 2)
            let otherThread = Self.record("c3", kind: .comment, revision: 2)
            try await backend.write { transaction throws in
                try await transaction.upsert(
                    [
                        Self.row(Self.record("a", revision: 1, content: "old")),
                        Self.row(Self.record("pdf7", revision: 1)),
                        Self.row(Self.record("a", revision: 1)),  // the last write of an id wins
                    ],
                    documentID: "d",
                    layer: ""
                )
                try await transaction.upsert(
                    [
                        Self.row(comment1, threadRoot: "a"), Self.row(comment2, threadRoot: "a"),
                        Self.row(otherThread, threadRoot: "pdf7"),
                        Self.row(Self.record("pdf7", revision: 2, deleted: true)),
                    ],
                    documentID: "d",
                    layer: ""
                )
            }
            try await backend.read { transaction throws in
                #expect(
                    try await transaction.liveRecords(documentID: "d", layer: "", kind: nil) == [
                        Self.record("a", revision: 1), comment1, comment2, otherThread,
                    ])
                #expect(
                    try await transaction.liveRecords(documentID: "d", layer: "", kind: .annotation) == [
                        Self.record("a", revision: 1)
                    ])
                let byID = try await transaction.records(documentID: "d", layer: "", ids: ["pdf7", "a", "none"])
                #expect(
                    Set(byID) == [Self.record("a", revision: 1), Self.record("pdf7", revision: 2, deleted: true)])
                #expect(try await transaction.records(documentID: "d", layer: "", ids: []).isEmpty)
                #expect(
                    try await transaction.comments(documentID: "d", layer: "", threadRoots: ["a"]) == [
                        comment1, comment2,
                    ])
                #expect(
                    try await transaction.comments(documentID: "d", layer: "", threadRoots: ["a", "pdf7"]).map(\.id)
                        == ["c1", "c2", "c3"])
                #expect(
                    try await transaction.records(documentID: "d", layer: "", changedAfter: 1).map(\.id) == [
                        "c1", "c2", "c3", "pdf7",
                    ])
                #expect(
                    try await transaction.records(documentID: "d", layer: "", changedAfter: 0).map(\.id).first == "a")
                #expect(try await transaction.records(documentID: "d", layer: "other", changedAfter: 0).isEmpty)
            }
        }
    }

    @Test func manyRecordsInOneUpsertAndACopy() async throws {
        try await withPostgresBackend { backend in
            try await Self.makeLayer(backend)
            let records = (0..<1_234).map { Self.record(String(format: "r%05d", $0), revision: 1) }
            try await backend.write { transaction throws in
                try await transaction.upsert(records.map { Self.row($0) }, documentID: "d", layer: "")
                try await transaction.upsert(
                    [Self.row(Self.record("r00001", revision: 2, deleted: true))], documentID: "d", layer: "")
                try await transaction.upsert(
                    [Self.row(Self.record("c", kind: .comment, revision: 2), threadRoot: "r00000")],
                    documentID: "d", layer: "")
                #expect(try await transaction.insertLayer(documentID: "d", name: "copy", revision: 0))
                let copied = try await transaction.copyLiveRecords(
                    documentID: "d", from: "", to: "copy", revision: 1, at: Self.time)
                #expect(copied == 1_234)
            }
            try await backend.read { transaction throws in
                let live = try await transaction.liveRecords(documentID: "d", layer: "", kind: nil)
                #expect(live.count == 1_234)
                let copy = try await transaction.liveRecords(documentID: "d", layer: "copy", kind: nil)
                #expect(copy.map(\.id) == live.map(\.id))
                #expect(copy.allSatisfy { $0.revision == 1 && $0.updatedAt == Self.time })
                #expect(copy.first?.createdBy == "alice")
                #expect(
                    try await transaction.comments(documentID: "d", layer: "copy", threadRoots: ["r00000"]).map(\.id)
                        == ["c"])
            }
        }
    }

    /// The group transaction's lookups of records by id and of clients' last push ids, and the
    /// check of the group's write that the records it took as absent are, read the primary key,
    /// one key at a time, with the plan PostgreSQL keeps for the prepared statement, even where the
    /// statistics say a layer is small (many small layers beside one large one): `id = ANY($3)`
    /// and `(user_scope, client_id) IN (…)` were planned there as a filter over all of the layer's
    /// records or clients.
    @Test func groupLookupsReadThePrimaryKeyWhateverTheStatistics() async throws {
        try await withPostgresBackend { backend in
            try await Self.makeLayer(backend)
            let (recordsPlan, groupPlan, writePlan) = try await backend.write { transaction throws in
                let postgres = transaction as! PostgresTransaction
                try await postgres.execute(
                    "INSERT INTO layers (document_id, name, revision) SELECT 'd', 'small' || g, 0 FROM generate_series(1, 1000) g",
                    "making small layers")
                try await postgres.execute(
                    """
                    INSERT INTO records (document_id, layer, id, kind, revision, deleted, content, updated_at)
                    SELECT 'd', 'small' || (g % 1000 + 1), 'r' || g, 'annotation', 1, false, convert_to('{}', 'UTF8'), 0
                    FROM generate_series(1, 3000) g
                    UNION ALL
                    SELECT 'd', '', 'big' || g, 'annotation', g, false, convert_to('{}', 'UTF8'), 0 FROM generate_series(1, 5000) g
                    """,
                    "filling the layers")
                try await postgres.execute(
                    """
                    INSERT INTO client_pushes (document_id, layer, user_scope, client_id, push_id, revision)
                    SELECT 'd', 'small' || (g % 1000 + 1), 'u', 'c' || g, 1, 1 FROM generate_series(1, 2000) g
                    UNION ALL
                    SELECT 'd', '', 'u', 'big' || g, 1, 1 FROM generate_series(1, 5000) g
                    """,
                    "storing push state")
                try await postgres.execute("ANALYZE records, client_pushes", "analyzing")
                return (
                    try await Self.genericPlan(
                        PreparedStatements.RecordsByID.sql, parameters: "text, text, text[]",
                        arguments: "'d', '', ARRAY['big1', 'big2']", in: postgres),
                    try await Self.genericPlan(
                        PreparedStatements.GroupReads.sql, parameters: Self.groupReadsParameters,
                        arguments: "'d', '', ARRAY['big1', 'big2'], ARRAY['u'], ARRAY['big1'], 4998", in: postgres),
                    try await Self.genericPlan(
                        PreparedStatements.FinishCommits.sql,
                        parameters: """
                            text, text, bigint, text[], text[], bigint[], bigint[], text, text[], text[], text[],
                            bigint[], boolean[], text[], text[], text[], bigint[], bytea[], double precision[], text[],
                            text, text[]
                            """,
                        arguments: """
                            'd', '', 5001, '{}', '{}', '{}', '{}', 'events', '{}', '{}', '{}', '{}', '{}', '{}', '{}',
                            '{}', '{}', '{}', '{}', '{}', '1', ARRAY['new1', 'new2']
                            """, in: postgres)
                )
            }
            #expect(recordsPlan.contains("records_pkey"), "\(recordsPlan)")
            #expect(recordsPlan.contains("(id = "), "the id is part of the index condition: \(recordsPlan)")
            #expect(!recordsPlan.contains("Filter"), "\(recordsPlan)")
            #expect(groupPlan.contains("records_pkey"), "\(groupPlan)")
            #expect(groupPlan.contains("(id = "), "the id is part of the index condition: \(groupPlan)")
            #expect(groupPlan.contains("client_pushes_pkey"), "\(groupPlan)")
            #expect(groupPlan.contains("(client_id = "), "the client is part of the index condition: \(groupPlan)")
            #expect(groupPlan.contains("(revision > "), "the changes come from the revision index: \(groupPlan)")
            #expect(
                !groupPlan.contains("Filter") && !groupPlan.contains("Hash Join") && !groupPlan.contains("Seq Scan"),
                "\(groupPlan)")
            // The write's check of the records a group took as absent: one lookup each.
            #expect(writePlan.contains("Index Only Scan using records_pkey"), "\(writePlan)")
            #expect(writePlan.contains("(id = assumed.id)"), "\(writePlan)")
            #expect(!writePlan.contains("records_revision") && !writePlan.contains("Seq Scan"), "\(writePlan)")
            let (found, read) = try await backend.read { transaction throws in
                (
                    try await transaction.records(
                        documentID: "d", layer: "", ids: ["big2", "big1", "big2", "missing"]),
                    try await transaction.groupReads(
                        documentID: "d", layer: "", ids: ["big2", "big1", "big2", "missing"],
                        clients: [
                            ClientIdentity(userID: "u", clientID: "big1"),
                            ClientIdentity(userID: "u", clientID: "unknown"),
                        ], changedAfter: 4998)
                )
            }
            #expect(found.map(\.id).sorted() == ["big1", "big2"], "each id once")
            #expect(read.records.map(\.id).sorted() == ["big1", "big2"], "each id once")
            #expect(read.lastPushIDs == [ClientIdentity(userID: "u", clientID: "big1"): 1])
            #expect(read.changed.map(\.id) == ["big4999", "big5000"], "by revision")
        }
    }

    /// The SQL types of the group read's parameters, in order.
    static let groupReadsParameters = "text, text, text[], text[], text[], bigint"

    /// The plan PostgreSQL keeps for a prepared statement (a generic one, as the server's
    /// connections ask for), inside `postgres`'s transaction.
    static func genericPlan(_ sql: String, parameters: String, arguments: String, in postgres: PostgresTransaction)
        async throws -> String
    {
        try await postgres.execute("SET LOCAL plan_cache_mode = force_generic_plan", "forcing generic plans")
        try await postgres.execute(
            PostgresQuery(unsafeSQL: "PREPARE lookup(\(parameters)) AS \(sql)"), "preparing the lookup")
        let lines = try await postgres.map(
            PostgresQuery(unsafeSQL: "EXPLAIN EXECUTE lookup(\(arguments))"), "explaining the lookup"
        ) { try $0.decode(String.self) }
        try await postgres.execute("DEALLOCATE lookup", "deallocating the lookup")
        return lines.joined(separator: "\n")
    }

    /// Where one layer is most of the table (a server with one large document), the changes after
    /// a revision come from the revision index: a generic plan guessed that `revision > $n`
    /// matches a third of the records, and planned a bitmap scan, or with other statistics a scan
    /// of the whole table for each group and each answer (2.6 ms a group at 18,000 records in the
    /// benchmark, growing with the table).
    @Test func changesAfterARevisionComeFromTheIndexWhenOneLayerIsTheWholeTable() async throws {
        try await withPostgresBackend { backend in
            try await Self.makeLayer(backend)
            let (groupPlan, changesPlan) = try await backend.write { transaction throws in
                let postgres = transaction as! PostgresTransaction
                try await postgres.execute(
                    """
                    INSERT INTO records (document_id, layer, id, kind, revision, deleted, content, updated_at)
                    SELECT 'd', '', 'r' || g, 'annotation', g, false,
                        convert_to('{"note": "' || repeat('x', 300) || '"}', 'UTF8'), 0
                    FROM generate_series(1, 20000) g
                    """,
                    "filling the layer")
                try await postgres.execute("ANALYZE records", "analyzing")
                return (
                    try await Self.genericPlan(
                        PreparedStatements.GroupReads.sql, parameters: Self.groupReadsParameters,
                        arguments: "'d', '', ARRAY['r1'], ARRAY[]::text[], ARRAY[]::text[], 19990", in: postgres),
                    try await Self.genericPlan(
                        PreparedStatements.RecordsChangedAfter.sql, parameters: "text, text, bigint",
                        arguments: "'d', '', 19990", in: postgres)
                )
            }
            // An index scan in revision order, as for the handful of changes PostgreSQL now
            // expects; a bitmap or table scan is what it planned for a third of the layer.
            for plan in [groupPlan, changesPlan] {
                #expect(plan.contains("Index Scan using records_revision"), "\(plan)")
                #expect(!plan.contains("Seq Scan on records") && !plan.contains("Bitmap"), "\(plan)")
            }
            let changed = try await backend.read { transaction throws in
                try await transaction.records(documentID: "d", layer: "", changedAfter: 19990)
            }
            #expect(changed.map(\.revision) == Array(19991...20000))
        }
    }

    /// A group costs the same statements whatever the number of its commits and of their changes
    /// and answers (up to what one statement writes): one read (the layer, the records the commits
    /// name, the clients' last pushes, the changes the answers ask) and one write (the records, the
    /// revision, the push ids, the notification, if the layer is as it was read); only the write
    /// when the node's memory of the layer has what the read would find. A group that locks the
    /// layer (the first since the layer's commits stopped coming) adds `BEGIN`, the lock and
    /// `COMMIT`. Each statement waits for PostgreSQL's answer, and the groups of a layer follow
    /// each other, so their number bounds the pushes a layer takes per second; the pushes that
    /// arrive while a group waits for the lock join it.
    @Test func aGroupIsOneStatementTwoOrFiveWhenItLocksTheLayer() async throws {
        try await Self.withStatementCounts { backend, storage in
            let oneGroup: [String: Int64] = ["BEGIN": 1, "lock": 1, "read": 1, "write": 1, "COMMIT": 1]
            /// Pushes puts of `ids`; answers how many records changed after `answersAfter`.
            @Sendable func push(
                _ client: String, pushID: Int64 = 1, ids: [String], layer: String = "", answersAfter: Int64 = 0
            ) async throws -> Int {
                try await storage.apply(
                    documentID: "d", layer: layer,
                    push: ClientPush(client: ClientIdentity(userID: "u", clientID: client), pushID: pushID),
                    reading: ids,
                    deciding: { _ in
                        LayerDecision(changes: ids.map { .put(StorageConformanceTests.annotation($0)) }, outcome: ())
                    },
                    answerCarries: AnsweredChanges(after: answersAfter),
                    answering: { reader, _, _ in try await reader.records(changedAfter: answersAfter).count }
                ).answer ?? -1
            }
            try await Self.resetStatementCounts(backend)
            #expect(try await push("alone", ids: (0..<30).map { "a\($0)" }) == 30)
            let alone = try await Self.statementCounts(backend)
            #expect(alone == oneGroup)

            // A commit holds the layer while nine others queue behind it: they make one group.
            try await Self.resetStatementCounts(backend)
            let (holder, release) = await StorageConformanceTests.holdLayer(storage, putting: "held")
            let queued = (0..<9).map { client in
                Task { try await push("c\(client)", ids: ["c\(client)-1", "c\(client)-2"]) }
            }
            let key = LayerCommitQueue.LayerKey(documentID: "d", layer: "")
            #expect(try await eventually { storage.commitQueue.waitingCount(on: key) == 9 })
            release()
            _ = try await holder.value
            var answers: [Int] = []
            for task in queued { answers.append(try await task.value) }
            #expect(answers == Array(repeating: 30 + 1 + 18, count: 9), "each answer sees the whole group")
            let grouped = try await Self.statementCounts(backend)
            // The held commit's group follows the first one, which locked the layer (it had no
            // group before it here to go by): it reads first without the lock, and writes. The
            // group of nine follows it and knows the revision it left: a read and a write.
            #expect(grouped == ["read": 2, "write": 2])

            // The nine push again, one after the other. The memory of the group before knows their
            // push ids and the changes their answers need, and the records are new: a group
            // reads nothing and is one write, which checks that the records are absent.
            try await Self.resetStatementCounts(backend)
            for client in 0..<9 {
                #expect(try await push("c\(client)", pushID: 2, ids: ["c\(client)-3"]) == 49 + client + 1)
            }
            #expect(try await Self.statementCounts(backend) == ["write": 9])

            // A record the memory does not have (its changes start after the revision the last
            // answer asked from) is taken as absent; the write finds it there and writes nothing,
            // and the group reads it and writes again.
            let revision = try #require(try await storage.layer(documentID: "d", name: "")?.revision)
            #expect(try await push("c0", pushID: 3, ids: ["c0-4"], answersAfter: revision) == 1)
            try await Self.resetStatementCounts(backend)
            #expect(try await push("c1", pushID: 3, ids: ["a0"], answersAfter: revision + 1) == 1)
            #expect(try await Self.statementCounts(backend) == ["write": 2, "read": 1])
            let edited = try await storage.record(documentID: "d", layer: "", id: "a0")
            #expect(edited?.revision == revision + 2, "the edit was applied once, after the refused write")
            #expect(try await push("c1", pushID: 3, ids: ["a0"], answersAfter: revision + 1) == 1, "a retry")
            #expect(try await storage.record(documentID: "d", layer: "", id: "a0")?.revision == revision + 2)

            // After a group that named an older record, the next one reads first: pushes that edit
            // older records one after the other (a form being filled) do not each cost a refused
            // write. A group that named only records it knew, or absent ones, lets the next write
            // without reading again.
            try await Self.resetStatementCounts(backend)
            #expect(try await push("c1", pushID: 4, ids: ["a1"], answersAfter: revision + 2) == 1)
            #expect(try await push("c1", pushID: 5, ids: ["a2"], answersAfter: revision + 3) == 1)
            #expect(
                try await Self.statementCounts(backend) == ["write": 3, "read": 2],
                "a refused write, then a read and a write each")
            try await Self.resetStatementCounts(backend)
            #expect(try await push("c1", pushID: 6, ids: ["c1-5"], answersAfter: revision + 4) == 1)
            #expect(try await push("c1", pushID: 7, ids: ["c1-6"], answersAfter: revision + 5) == 1)
            #expect(
                try await Self.statementCounts(backend) == ["write": 2, "read": 1], "a read and a write, then a write")

            // Commits that arrive while a locked group waits for the layer's lock (held here as
            // another node's transaction would hold it) join that group. The first group on a
            // layer locks it.
            try await backend.write { transaction throws in
                #expect(try await transaction.insertLayer(documentID: "d", name: "late", revision: 0))
            }
            let (unblocked, unblock) = AsyncStream.makeStream(of: Void.self)
            let (locked, lockedSignal) = AsyncStream.makeStream(of: Void.self)
            let otherNode = Task {
                try await backend.write { transaction in
                    try await (transaction as! PostgresTransaction).execute(
                        "SELECT 1 FROM layers WHERE document_id = 'd' AND name = 'late' FOR UPDATE",
                        "holding the layer")
                    lockedSignal.yield()
                    for await _ in unblocked { break }
                }
            }
            for await _ in locked { break }
            let first = Task { try await push("late0", ids: ["late0"], layer: "late") }
            #expect(try await eventually { try await Self.lockWaiters(backend) == 1 })
            try await Self.resetStatementCounts(backend)
            let later = (1..<3).map { client in
                Task { try await push("late\(client)", ids: ["late\(client)"], layer: "late") }
            }
            let lateKey = LayerCommitQueue.LayerKey(documentID: "d", layer: "late")
            #expect(try await eventually { storage.commitQueue.waitingCount(on: lateKey) == 3 })
            unblock.yield()
            try await otherNode.value
            var lateAnswers = [try await first.value]
            for task in later { lateAnswers.append(try await task.value) }
            #expect(lateAnswers == Array(repeating: 3, count: 3), "\(lateAnswers)")
            let joined = try await Self.statementCounts(backend)
            #expect(
                joined == ["lock": 1, "read": 1, "write": 1, "COMMIT": 2],
                "one group (its BEGIN before the count), and the other node's COMMIT")
        }
    }

    /// A layer's group commits run on the event loop of the pool's connections, where their
    /// statements' answers arrive, both those that lock the layer (the first ones) and those that
    /// do not: not on the event loops that serve HTTP and WebSockets.
    @Test func aLayersGroupsRunOnTheLoopOfTheConnections() async throws {
        try await withPostgresBackend { backend in
            try await Self.makeLayer(backend)
            let storage = InstantStorage(backend: backend, pdfs: PostgresBlobStore(backend: backend))
            var onTheLoop: [Bool?] = []
            for group in 0..<4 {
                onTheLoop.append(
                    try await storage.apply(documentID: "d", layer: "", push: nil) { _ in
                        LayerDecision(
                            changes: [.put(StorageConformanceTests.annotation("g\(group)"))],
                            outcome: PostgresBackend.transactionExecutor.eventLoop.inEventLoop)
                    }.outcome)
            }
            #expect(onTheLoop == [true, true, true, true])
        }
    }

    /// A group's read and write are planned once per connection, not at each group: their plans
    /// are generic, whatever the lengths of their arrays (PostgreSQL's default would plan the read
    /// again at every execution, which costs a group more than running it).
    @Test func aGroupsStatementsAreNotPlannedAgainForEachGroup() async throws {
        try await Self.withStatementCounts { backend, storage in
            let groups = 30
            for group in 0..<groups {
                let ids = (0...(group % 4)).map { "g\(group)-\($0)" }
                // A new client each time: the group reads its last push id (a group whose memory
                // knows everything only writes).
                _ = try await storage.apply(
                    documentID: "d", layer: "",
                    push: ClientPush(client: ClientIdentity(userID: "u", clientID: "c\(group)"), pushID: 1),
                    reading: ids,
                    deciding: { _ in
                        LayerDecision(changes: ids.map { .put(StorageConformanceTests.annotation($0)) }, outcome: ())
                    },
                    answerCarries: AnsweredChanges(after: 0),
                    answering: { reader, _, _ in try await reader.records(changedAfter: 0).count })
            }
            let counted = try await backend.readStatement { transaction in
                try await (transaction as! PostgresTransaction).map(
                    """
                    SELECT CASE WHEN query LIKE '%UNION ALL%' THEN 'read' ELSE 'write' END, sum(calls)::bigint,
                        sum(plans)::bigint
                    FROM pg_stat_statements
                    WHERE query LIKE '%UNION ALL%' OR query LIKE 'WITH revised AS%'
                    GROUP BY 1 ORDER BY 1
                    """, "reading the count"
                ) { try $0.decode((String, Int64, Int64).self) }
            }
            #expect(counted.map(\.0) == ["read", "write"])
            for (statement, calls, plans) in counted {
                #expect(calls == Int64(groups), "\(statement): \(calls) runs, one a group")
                #expect(plans * 3 <= calls, "\(statement): \(plans) plans for \(calls) runs")
            }
        }
    }

    /// A group that does not lock the layer writes only if no other writer changed the layer since
    /// it read it. When another node commits in between, or holds the layer when the write comes
    /// (the write waits for it, then finds the row that node left), the group writes nothing and
    /// runs again, locking the layer: its commit comes after the other node's, with the revision
    /// after it, decided against the layer as that node left it. The same when the group read
    /// nothing, its node's memory of the layer knowing all it needed (`knownClient`).
    @Test(arguments: [false, true], [false, true])
    func aGroupThatFindsTheLayerChangedRunsAgainLocked(otherNodeHoldsTheLayer: Bool, knownClient: Bool)
        async throws
    {
        try await withPostgresBackend { backend in
            try await Self.makeLayer(backend)
            let nodeA = InstantStorage(backend: backend, pdfs: PostgresBlobStore(backend: backend))
            let nodeB = InstantStorage(backend: backend, pdfs: PostgresBlobStore(backend: backend))
            let heard = EventRecorder()
            nodeA.addObserver(heard)
            // A's push queues behind a second group on A, which finds the layer as the first one
            // left it: A's push's group does not lock the layer. With `knownClient`, A's memory of
            // the layer has the client's last push id, and the group does not read either.
            let client = ClientIdentity(userID: "u", clientID: "a")
            _ = try await nodeA.apply(
                [.put(StorageConformanceTests.annotation("zero"))], documentID: "d", layer: "",
                push: knownClient ? ClientPush(client: client, pushID: 1) : nil, onConditionFailure: .abortBatch)
            let pushID: Int64 = knownClient ? 2 : 1
            let (first, releaseFirst) = await StorageConformanceTests.holdLayer(nodeA, putting: "first")
            let decisions = NIOLockedValueBox(0)
            let other = NIOLockedValueBox<(commit: Task<CommitResult, any Error>, release: @Sendable () -> Void)?>(nil)
            let push = Task {
                try await nodeA.apply(
                    documentID: "d", layer: "", push: ClientPush(client: client, pushID: pushID), reading: ["mine"]
                ) { reader in
                    let decision = decisions.withLockedValue { count in
                        count += 1
                        return count
                    }
                    if decision == 1 && otherNodeHoldsTheLayer {
                        let held = await StorageConformanceTests.holdLayer(nodeB, putting: "theirs")
                        other.withLockedValue { $0 = held }
                    } else if decision == 1 {
                        _ = try await nodeB.apply(
                            [.put(StorageConformanceTests.annotation("theirs"))], documentID: "d", layer: "",
                            onConditionFailure: .abortBatch)
                    }
                    return LayerDecision(
                        changes: [.put(StorageConformanceTests.annotation("mine"))], outcome: reader.revision)
                }
            }
            let key = LayerCommitQueue.LayerKey(documentID: "d", layer: "")
            #expect(try await eventually { nodeA.commitQueue.waitingCount(on: key) == 1 })
            releaseFirst()
            #expect(try await first.value.revision == 2)
            if otherNodeHoldsTheLayer {
                // A's write waits for B's lock on the layer's row.
                #expect(try await eventually { try await Self.lockWaiters(backend) == 1 })
                let held = try #require(other.withLockedValue { $0 })
                held.release()
                #expect(try await held.commit.value.revision == 3)
            }
            let (result, decidedOn) = try await push.value
            #expect(decisions.withLockedValue { $0 } == 2, "decided again, against the layer B left")
            #expect(decidedOn == 3)
            #expect(result.revision == 4)
            let stored = try await backend.read { transaction in
                try await transaction.records(documentID: "d", layer: "", changedAfter: 0).map { [$0.id: $0.revision] }
            }
            #expect(stored == [["zero": 1], ["first": 2], ["theirs": 3], ["mine": 4]])
            #expect(try await nodeA.lastPushID(documentID: "d", layer: "", client: client) == pushID)
            // The node's observers hear that the group ran again, locked.
            #expect(try await eventually { heard.groups.count == 3 })
            #expect(heard.groups.map(\.ranAgain) == [false, false, true])
            #expect(heard.groups.last?.path == .locked)
        }
    }

    /// A client whose requests a load balancer sends to each node in turn: each node's group finds
    /// the layer written by the other since its last group there, and reads it first without
    /// locking it: a read and a write, answering what the client lacks. A group whose write finds
    /// that the other node wrote the layer since its read (two nodes writing the layer at the same
    /// time) writes nothing and runs again, locked; the node's next groups on the layer lock it too,
    /// each counting down, and the one after them reads first without the lock again.
    @Test func pushesToEachNodeInTurnReadFirstWithoutTheLock() async throws {
        try await Self.withStatementCounts { backend, nodeA in
            let nodeB = InstantStorage(backend: backend, pdfs: PostgresBlobStore(backend: backend))
            let client = ClientIdentity(userID: "u", clientID: "phone")
            let pushIDs = NIOLockedValueBox<Int64>(0)
            /// Pushes a put of `id` through `node`; the revision it took, and the ids its answer
            /// carries (the changes after `base`). `deciding` runs in each of its decisions.
            @Sendable func push(
                _ node: InstantStorage, _ id: String, base: Int64,
                deciding: @escaping @Sendable () async throws -> Void = {}
            ) async throws -> (revision: Int64, answer: [String]) {
                let pushID = pushIDs.withLockedValue { last in
                    last += 1
                    return last
                }
                let (result, _, answer) = try await node.apply(
                    documentID: "d", layer: "", push: ClientPush(client: client, pushID: pushID), reading: [id],
                    deciding: { _ in
                        try await deciding()
                        return LayerDecision(changes: [.put(StorageConformanceTests.annotation(id))], outcome: ())
                    },
                    answerCarries: AnsweredChanges(after: base, withinRevisions: 64),
                    answering: { reader, _, _ in try await reader.records(changedAfter: base).map(\.id) })
                return (result.revision, answer ?? [])
            }
            /// A push through node B, then one through node A, each with the revision of the last answer.
            @Sendable func pushToEachInTurn(after revision: Int64) async throws -> Int64 {
                let pushedToB = try await push(nodeB, "b\(revision)", base: revision)
                let pushedToA = try await push(nodeA, "a\(revision)", base: pushedToB.revision)
                #expect(pushedToA.answer == ["a\(revision)"], "each answer carries the push's own change")
                return pushedToA.revision
            }
            // Each node's first group on the layer locks it.
            var revision = try await push(nodeA, "first", base: 0).revision
            revision = try await pushToEachInTurn(after: revision)
            try await Self.resetStatementCounts(backend)
            for _ in 0..<3 { revision = try await pushToEachInTurn(after: revision) }
            #expect(try await Self.statementCounts(backend) == ["read": 6, "write": 6], "a read and a write each")
            // A client that missed a change is answered it.
            let missed = try await push(nodeB, "missed", base: revision - 1)
            #expect(missed.answer == ["a\(revision - 2)", "missed"])
            revision = missed.revision

            // Node B writes between node A's read and its write.
            try await Self.resetStatementCounts(backend)
            let decisions = NIOLockedValueBox(0)
            let refused = try await push(nodeA, "mine", base: revision) {
                let decision = decisions.withLockedValue { count in
                    count += 1
                    return count
                }
                if decision == 1 {
                    _ = try await nodeB.apply(
                        [.put(StorageConformanceTests.annotation("theirs"))], documentID: "d", layer: "",
                        onConditionFailure: .abortBatch)
                }
            }
            #expect(decisions.withLockedValue { $0 } == 2, "decided again, against the layer B left")
            #expect(refused.revision == revision + 2)
            #expect(refused.answer == ["theirs", "mine"])
            #expect(
                try await Self.statementCounts(backend)
                    == ["read": 3, "write": 3, "BEGIN": 1, "lock": 1, "COMMIT": 1],
                "A's read and refused write, B's read and write, A's locked group")
            let key = LayerCommitQueue.LayerKey(documentID: "d", layer: "")
            let locks = LayerCommitQueue.lockedGroupsAfterRefusal
            #expect(nodeA.commitQueue.lastGroup(on: key, at: Date())?.locksNext == locks)
            revision = refused.revision
            try await Self.resetStatementCounts(backend)
            revision = try await pushToEachInTurn(after: revision)
            // B's last group there found the layer as the one before it had left it: B goes by its
            // memory of the layer. Its read finds the layer changed (A wrote), and B reads again,
            // first without the lock, and writes. A locks the layer.
            let afterRefusal = try await Self.statementCounts(backend)
            #expect(afterRefusal == ["read": 3, "write": 2, "BEGIN": 1, "lock": 1, "COMMIT": 1])
            #expect(nodeA.commitQueue.lastGroup(on: key, at: Date())?.locksNext == locks - 1)
            for _ in 1..<locks { revision = try await pushToEachInTurn(after: revision) }
            #expect(nodeA.commitQueue.lastGroup(on: key, at: Date())?.locksNext == 0)
            try await Self.resetStatementCounts(backend)
            _ = try await pushToEachInTurn(after: revision)
            #expect(try await Self.statementCounts(backend) == ["read": 2, "write": 2], "A reads first again")
            let stored = try await backend.read { transaction in
                try await transaction.records(documentID: "d", layer: "", changedAfter: 0).count
            }
            #expect(stored == 1 + 2 * (locks + 5) + 3, "every push applied once")
        }
    }

    /// A node analyzes the records table once it has written enough rows, so that PostgreSQL plans
    /// the prepared statements for the table's real size without waiting for its autovacuum.
    @Test func aNodeAnalyzesTheRecordsTableAsItGrows() async throws {
        try await withPostgresBackend { backend in
            try await Self.makeLayer(backend)
            func analyses() async throws -> Int64 {
                try await backend.read { transaction throws in
                    try await (transaction as! PostgresTransaction).value(
                        "SELECT analyze_count FROM pg_stat_user_tables WHERE relname = 'records'", as: Int64.self,
                        "reading the table's analyses") ?? 0
                }
            }
            #expect(try await analyses() == 0)
            let records = (0..<(RecordStatistics.minimumRows - 1)).map { Self.record("r\($0)", revision: 1) }
            try await backend.write { transaction throws in
                try await transaction.upsert(records.map { Self.row($0) }, documentID: "d", layer: "")
            }
            #expect(!backend.recordStatistics.isAnalyzing, "not before the threshold")
            try await backend.write { transaction throws in
                try await transaction.upsert([Self.row(Self.record("last", revision: 2))], documentID: "d", layer: "")
            }
            #expect(try await eventually { try await analyses() == 1 && !backend.recordStatistics.isAnalyzing })
            let estimate = try await backend.read { transaction throws in
                try await (transaction as! PostgresTransaction).value(
                    "SELECT reltuples::double precision FROM pg_class WHERE oid = 'records'::regclass",
                    as: Double.self, "reading the estimate")
            }
            #expect(estimate == Double(RecordStatistics.minimumRows), "PostgreSQL knows the table's size")
        }
    }

    @Test func baseRecordsPushStateAttachmentsAndTokens() async throws {
        try await withPostgresBackend { backend in
            try await Self.makeLayer(backend)
            let alice = ClientIdentity(userID: "alice", clientID: "c")
            let anonymous = ClientIdentity(userID: nil, clientID: "c")
            let attachment = StoredAttachment(
                sha256: "k1", contentType: "image/png", data: Data(repeating: 7, count: 300_000))
            try await backend.write { transaction throws in
                try await transaction.insertBaseRecords(
                    documentID: "d",
                    [
                        RecordWrite(
                            id: "pdf2", kind: .formFieldValue, group: "g", pdfObjectID: 2, content: Data("{}".utf8)),
                        RecordWrite(id: "pdf1", kind: .annotation, content: Data("[]".utf8)),
                    ])
                try await transaction.setLastPushID(3, documentID: "d", layer: "", client: alice, revision: 1)
                try await transaction.setLastPushID(4, documentID: "d", layer: "", client: alice, revision: 2)
                try await transaction.insertAttachment(documentID: "d", attachment)
                try await transaction.insertAttachment(
                    documentID: "d", StoredAttachment(sha256: "k1", contentType: "text/plain", data: Data()))
                try await transaction.revokeTokens(ids: ["j1", "j2", "j1"], at: Self.time)
                try await transaction.revokeTokens(ids: ["j2"], at: Self.time)
                try await transaction.revokeTokens(ids: [], at: Self.time)
            }
            try await backend.read { transaction throws in
                #expect(
                    try await transaction.baseRecords(documentID: "d") == [
                        StoredRecord(
                            id: "pdf1", kind: .annotation, revision: 0, content: Data("[]".utf8),
                            updatedAt: Date(timeIntervalSince1970: 0)),
                        StoredRecord(
                            id: "pdf2", kind: .formFieldValue, revision: 0, group: "g", pdfObjectID: 2,
                            content: Data("{}".utf8), updatedAt: Date(timeIntervalSince1970: 0)),
                    ])
                #expect(try await transaction.lastPushID(documentID: "d", layer: "", client: alice) == 4)
                #expect(try await transaction.lastPushID(documentID: "d", layer: "", client: anonymous) == nil)
                #expect(try await transaction.attachment(documentID: "d", sha256: "k1") == attachment)
                #expect(try await transaction.attachment(documentID: "d", sha256: "k2") == nil)
                #expect(try await transaction.attachmentKeys(documentID: "d", among: ["k1", "k2"]) == ["k1"])
                #expect(try await transaction.isTokenRevoked(id: "j1"))
                #expect(try await transaction.isTokenRevoked(id: "j3") == false)
            }
        }
    }

    // MARK: Errors

    @Test func databaseErrorsSayWhatTheServerSaid() async throws {
        try await withPostgresBackend { backend throws in
            await #expect {
                try await backend.write { transaction throws in
                    try await (transaction as! PostgresTransaction).execute("SELECT * FROM nowhere", "reading nowhere")
                }
            } throws: { error in
                guard let error = error as? StorageError else { return false }
                return error.code == .backendFailure && error.message.contains(#"relation "nowhere" does not exist"#)
                    && error.message.contains("42P01") && error.message.contains("while reading nowhere")
            }
            // A layer of a missing document breaks a foreign key; the transaction still works after.
            await #expect(throws: StorageError.self) {
                try await backend.write { try await $0.insertLayer(documentID: "missing", name: "", revision: 0) }
            }
            #expect(try await backend.read { try await $0.layers(documentID: "missing") }.isEmpty)
        }
    }

    @Test func anUnreachableServerFailsTheHealthCheckWithoutShowingThePassword() async throws {
        var configuration = try PostgresBackend.Configuration(url: "postgres://instant:s3cret@127.0.0.1:1/instant")
        configuration.healthCheckTimeout = .milliseconds(500)
        configuration.connectTimeout = .milliseconds(500)
        let backend = try PostgresBackend(configuration: configuration, logger: quietLogger)
        #expect(!backend.description.contains("s3cret"))
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await backend.run() }
            defer { group.cancelAll() }
            await #expect {
                try await backend.checkHealth()
            } throws: { error in
                guard let error = error as? StorageError else { return false }
                return error.code == .backendFailure && !error.message.contains("s3cret")
                    && error.message.contains("127.0.0.1:1")
            }
        }
    }

    // MARK: Blobs

    @Test func blobsAreStoredOnceAndReadByRange() async throws {
        try await withPostgresBackend { backend in
            let blobs = PostgresBlobStore(backend: backend)
            var generator = SystemRandomNumberGenerator()
            let data = (0..<(5 << 17)).map { _ in generator.next() as UInt64 }.withUnsafeBytes { Data($0) }
            let key = String(repeating: "e", count: 64)
            #expect(try await blobs.size(sha256: key) == nil)
            #expect(try await blobs.put(data, sha256: key))
            #expect(try await blobs.put(data, sha256: key) == false)
            #expect(try await blobs.size(sha256: key) == 5 << 20)
            #expect(try await blobs.read(sha256: key, range: 3_000_000..<3_000_100) == data[3_000_000..<3_000_100])
            #expect(try await blobs.read(sha256: key, range: 0..<3) == data[0..<3])
            #expect(try await blobs.read(sha256: key, range: (5 << 20) - 2..<(6 << 20)) == data.suffix(2))
            #expect(try await blobs.read(sha256: key, range: (6 << 20)..<(7 << 20)).isEmpty)
            #expect(try await blobs.data(sha256: key) == data)
            try await blobs.delete(sha256: key)
            try await blobs.delete(sha256: key)
            #expect(try await blobs.size(sha256: key) == nil)
            await #expect {
                try await blobs.read(sha256: key, range: 0..<1)
            } throws: { error in
                (error as? StorageError)?.code == .backendFailure
            }
        }
    }

    // MARK: Events

    /// The next committed event the listener receives, skipping its reconnections.
    static func nextEvent(_ iterator: inout AsyncStream<NodeChannelEvent>.Iterator) async -> StorageEvent? {
        while let notification = await iterator.next() {
            if case .message(.committed(let event)) = notification { return event }
        }
        return nil
    }

    /// Waits until the listener is connected and listening.
    static func waitUntilListening(_ iterator: inout AsyncStream<NodeChannelEvent>.Iterator) async {
        while let notification = await iterator.next() {
            if notification == .reconnected { return }
        }
    }

    @Test func announcedEventsArriveAfterCommitAndNotAfterRollback() async throws {
        struct Rollback: Error {}
        try await withPostgresBackend { backend in
            var events = backend.messages().makeAsyncIterator()
            await Self.waitUntilListening(&events)

            await #expect(throws: Rollback.self) {
                try await backend.write { transaction throws in
                    try await transaction.announce(.revisionChanged(documentID: "d", layer: "", revision: 1))
                    throw Rollback()
                }
            }
            // An event announced in a transaction arrives when that transaction commits: after the
            // event of a transaction that started later and committed first.
            let (announced, announcedSignal) = AsyncStream.makeStream(of: Void.self)
            let (committed, committedSignal) = AsyncStream.makeStream(of: Void.self)
            let slow = Task {
                try await backend.write { transaction throws in
                    try await transaction.announce(.revisionChanged(documentID: "d", layer: "", revision: 2))
                    announcedSignal.yield()
                    for await _ in committed { break }
                }
            }
            for await _ in announced { break }
            try await backend.write { transaction throws in
                try await transaction.announce(.layerRemoved(documentID: "d", layer: "x/ü\"y"))
            }
            committedSignal.yield()
            try await slow.value
            #expect(await Self.nextEvent(&events) == .layerRemoved(documentID: "d", layer: "x/ü\"y"))
            #expect(await Self.nextEvent(&events) == .revisionChanged(documentID: "d", layer: "", revision: 2))

            // Many token ids take several notifications.
            let ids = (0..<2_000).map { "token-\($0)-\(UUID().uuidString)" }
            try await backend.write { try await $0.revokeTokens(ids: ids, at: Self.time) }
            try await backend.write { try await $0.announce(.tokensRevoked(ids)) }
            var received: [String] = []
            while received.count < ids.count, case .tokensRevoked(let batch) = await Self.nextEvent(&events) {
                received += batch
            }
            #expect(Set(received) == Set(ids))
        }
    }

    @Test func theListenerChecksItsConnectionAndReconnectsWhenItIsCut() async throws {
        try await withPostgresBackend(configure: { $0.listenerCheckInterval = .milliseconds(50) }) { backend in
            var events = backend.messages().makeAsyncIterator()
            await Self.waitUntilListening(&events)
            // pg_stat_activity shows the last statement of each connection: the listener's check.
            func count(_ condition: String) async throws -> Int {
                try await backend.withConnection { connection in
                    try await connection.value(
                        """
                        SELECT count(*) FROM pg_stat_activity
                        WHERE datname = current_database() AND \(unescaped: condition)
                        """,
                        as: Int.self,
                        "looking at the connections"
                    ) ?? 0
                }
            }
            #expect(try await eventually { try await count("query = 'SELECT 1'") == 1 })
            try await backend.write { try await $0.announce(.layerRemoved(documentID: "d", layer: "1")) }
            #expect(await Self.nextEvent(&events) == .layerRemoved(documentID: "d", layer: "1"))

            try await backend.withConnection { connection in
                try await connection.execute(
                    """
                    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE datname = current_database() AND pid <> pg_backend_pid() AND query = 'SELECT 1'
                    """,
                    "cutting the listener's connection"
                )
            }
            await Self.waitUntilListening(&events)
            try await backend.write { try await $0.announce(.layerRemoved(documentID: "d", layer: "2")) }
            #expect(await Self.nextEvent(&events) == .layerRemoved(documentID: "d", layer: "2"))
        }
    }

    @Test func theListenerReconnectsWhenPostgreSQLRestarts() async throws {
        // On its Unix socket only, so that no other program takes its address while it is down.
        let server = try await PostgresTestServer.start(unixSocketOnly: true)
        defer { server.stop() }
        try await withPostgresBackend(on: server) { backend in
            var events = backend.messages().makeAsyncIterator()
            await Self.waitUntilListening(&events)
            try await server.restart()
            await Self.waitUntilListening(&events)
            // The pool may still hand out a connection that the restart closed: retry until a
            // transaction goes through.
            let announced = try await eventually {
                do {
                    try await backend.write { try await $0.announce(.tokensRevoked(["after-restart"])) }
                    return true
                } catch {
                    return false
                }
            }
            #expect(announced)
            #expect(await Self.nextEvent(&events) == .tokensRevoked(["after-restart"]))
        }
    }
}

@Suite("PostgreSQL backend configuration and events", .timeLimit(.minutes(10)))
struct PostgresBackendConfigurationTests {
    @Test func urlsAreReadLikeLibpqsAndShownWithoutThePassword() throws {
        let tcp = try PostgresBackend.Configuration(url: "postgres://me:p%40ss@db.example.com:6543/app?sslmode=require")
        #expect(tcp.endpoint == .tcp(host: "db.example.com", port: 6543))
        #expect(tcp.username == "me")
        #expect(tcp.password == "p@ss")
        #expect(tcp.database == "app")
        #expect(tcp.tls == .require)
        #expect(tcp.redactedURL == "postgres://me@db.example.com:6543/app?sslmode=require")

        let socket = try PostgresBackend.Configuration(url: "postgresql://me@/app?host=/var/run/postgresql&port=5433")
        #expect(socket.endpoint == .unixSocket(directory: "/var/run/postgresql", port: 5433))
        #expect(socket.password == nil)
        #expect(socket.redactedURL == "postgres://me@/app?host=/var/run/postgresql&port=5433")

        let defaults = try PostgresBackend.Configuration(url: "postgres://me@localhost")
        #expect(defaults.endpoint == .tcp(host: "localhost", port: 5432))
        #expect(defaults.database == "me")
        #expect(defaults.tls == .prefer)

        for bad in [
            "mysql://me@host/db", "postgres://host/db", "postgres://me@/db", "postgres://me@h/db?sslmode=maybe",
            "postgres://me@h/db?host=relative", "postgres://me:secret@h/db?options=x",
        ] {
            #expect {
                try PostgresBackend.Configuration(url: bad)
            } throws: { error in
                guard let error = error as? StorageError else { return false }
                return error.code == .backendFailure && !error.message.contains("secret")
            }
        }
    }

    /// An id too long for one notification cannot be announced: the transaction fails with a
    /// reason, rather than the other nodes missing the change.
    @Test func anIDTooLongForANotificationIsRefused() {
        #expect(throws: StorageError.self) {
            try PostgresBackend.payloads(.committed(.tokensRevoked([String(repeating: "x", count: 8_000)])))
        }
        #expect(throws: Never.self) {
            try PostgresBackend.payloads(.committed(.tokensRevoked((0..<2_000).map { "token-\($0)" })))
        }
    }
}
