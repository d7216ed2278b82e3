import CSQLiteSettings
import Foundation
import GRDB
import Logging
import NIOPosix
import ServiceLifecycle

/// The embedded backend: one SQLite database in WAL mode, through a GRDB `DatabasePool`, whose
/// log is copied into the database file beside the writer (``SQLiteCheckpointer``).
///
/// Write transactions follow each other (SQLite's single writer), so the revision a commit reads
/// under ``StorageTransaction/layer(documentID:name:forUpdate:)`` is the one it raises; reads run
/// beside writes on their own snapshots.
public final class SQLiteBackend: StorageBackend {
    let pool: DatabasePool
    let path: String
    /// Checkpoints the log beside the writer.
    let checkpointer: SQLiteCheckpointer

    /// Opens (creating if needed) the database and migrates its schema, telling `logger` about the
    /// migrations of a database that had some already (an upgrade).
    /// - Throws: ``StorageError/Code/backendFailure`` when the file cannot be opened or migrated.
    public init(path: String, logger: Logger = Logger(label: "instant.storage")) throws {
        self.path = path
        do {
            let parent = URL(fileURLWithPath: path).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
            var configuration = Configuration()
            configuration.foreignKeysEnabled = true
            configuration.busyMode = .timeout(10)
            configuration.label = "instant"
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA wal_autocheckpoint = \(SQLiteCheckpointer.writerCheckpointPages)")
            }
            pool = try DatabasePool(path: path, configuration: configuration)
            try Self.flushEveryCommit(of: pool)
            try Self.migrate(pool, logger: logger)
            checkpointer = try SQLiteCheckpointer(path: path, timingOn: Self.groupCommitLoop.next())
        } catch {
            throw StorageError(
                .backendFailure,
                "Cannot open the SQLite database at \(path): \(error). "
                    + "Check that the directory is writable and the file is an Instant database."
            )
        }
    }

    public var description: String { "SQLite at \(path)" }

    /// Applies the migrations the database has not had. When it had some (a database of an earlier
    /// version), says which before and how long they took after: a migration that rebuilds a table
    /// copies every row of it, which takes a while on a large database, during which the server
    /// does not answer yet.
    ///
    /// After an upgrade the file is compacted (`VACUUM`) and the log emptied to nothing: the rows
    /// a rebuild copied went through the log and left the old table's pages free in the file, each
    /// about as large as the data (a 548 MB database left a 926 MB file and a 931 MB log).
    ///
    /// While the upgrade runs, a line every `heartbeat` says how long it has been running, so that
    /// a long one is not taken for a server that hangs.
    static func migrate(_ pool: DatabasePool, logger: Logger, heartbeat: Duration = .seconds(10)) throws {
        let applied = try pool.read { db in try migrator.appliedIdentifiers(db) }
        let pending = migrator.migrations.filter { !applied.contains($0) }
        guard !applied.isEmpty, !pending.isEmpty else { return try migrator.migrate(pool) }
        let migrations: Logger.Metadata = ["migrations": "\(pending.joined(separator: ", "))"]
        logger.notice("Migrating the SQLite schema; on a large database this takes a while", metadata: migrations)
        let clock = ContinuousClock()
        let start = clock.now
        // A queue of its own, which gets a thread even while the shared pool's are all busy (a
        // process that starts other work beside the upgrade; the tests).
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "instant.sqlite.upgrade-heartbeat"))
        let interval = DispatchTimeInterval.nanoseconds(Int(heartbeat / .nanoseconds(1)))
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler {
            logger.notice(
                "Still migrating the SQLite schema",
                metadata: migrations.merging(["elapsed": "\(clock.now - start)"]) { $1 })
        }
        timer.resume()
        defer { timer.cancel() }
        let migrated = try clock.measure { try migrator.migrate(pool) }
        let compacted = try clock.measure {
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "VACUUM")
                try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
        }
        logger.notice(
            "Migrated the SQLite schema",
            metadata: migrations.merging(["duration": "\(migrated)", "compacting": "\(compacted)"]) { $1 })
    }

    /// Makes every commit of `pool` flushed to the disk before it returns, so that an acknowledged
    /// push survives a power loss (`synchronous = FULL`). Call it once the pool is open: a pool
    /// turns WAL mode on after `prepareDatabase`, and with it `synchronous` down to NORMAL, which
    /// flushes the log only at checkpoints. SQLite refuses the change inside a transaction.
    public static func flushEveryCommit(of pool: DatabasePool) throws {
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
    }

    /// Sets SQLite up for a server process; call it first thing, before any database opens (SQLite
    /// takes its settings only then) and while no other thread uses SQLite.
    ///
    /// It turns SQLite's memory statistics off: they take one mutex of the process on every
    /// allocation, which the writer of a group commit made thousands of times a transaction (4% of
    /// its time in a profile of the 100-change throughput benchmark). The server reads none of them.
    /// - Returns: whether SQLite took the settings (it has not started yet).
    @discardableResult
    public static func configureProcess() -> Bool {
        instant_sqlite_disable_memory_statistics() == 0
    }

    /// The event loop where the tasks of the layers' group commits run: a thread of its own,
    /// shared by every SQLite backend of the process and never shut down, like SwiftNIO's
    /// singletons.
    ///
    /// A group's task starts the next group's transaction once its statements are written, then
    /// announces its changes and wakes its commits' handlers. SQLite's one writer waits for that
    /// start between groups; on the server's event loops it waited behind the HTTP and WebSocket
    /// work queued there (a burst of pushes to parse and answers to encode).
    static let groupCommitLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    /// The executor of ``groupCommitLoop``.
    static let groupCommitExecutor = EventLoopTaskExecutor(groupCommitLoop.next())

    public var commitExecutor: (any TaskExecutor)? { Self.groupCommitExecutor }

    /// Nothing to do: the schema was migrated when the backend opened.
    public func prepare() async throws {}

    /// None: SQLite runs inside the server's process.
    public var services: [any Service] { [] }

    /// None: an embedded database serves one node.
    public var nodeChannel: (any NodeChannel)? { nil }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any StorageTransaction) async throws -> T) async throws
        -> T
    {
        let value = try await run(body) { pool, bridge in
            pool.asyncWriteWithoutTransaction { db in
                bridge.ended(Result { try Self.inWriteTransaction(db, bridge.serve) })
            }
        }
        checkpointer.committed()
        return value
    }

    /// Runs `body` in an immediate transaction: commits when it returns, rolls back when it throws.
    ///
    /// As GRDB's `inTransaction` does, with `BEGIN` and `COMMIT` prepared once per connection:
    /// GRDB prepares them again for every transaction, about a tenth of the writer's samples in the
    /// 1-change throughput benchmark (small transactions, one after the other).
    static func inWriteTransaction(_ db: Database, _ body: (Database) throws -> Void) throws {
        try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
        do {
            try body(db)
            try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
        } catch {
            // SQLite may have ended the transaction itself (a failed COMMIT, or an error that rolls
            // back); the first error is the one to report.
            if db.isInsideTransaction { try? db.rollback() }
            throw error
        }
    }

    public func read<T: Sendable>(_ body: @escaping @Sendable (any StorageTransaction) async throws -> T) async throws
        -> T
    {
        try await run(body) { pool, bridge in
            pool.asyncRead { database in
                bridge.ended(Result { try bridge.serve(try database.get()) })
            }
        }
    }

    public func checkHealth() async throws {
        try await read { transaction in _ = try await transaction.isTokenRevoked(id: "") }
    }

    /// Runs `body` against one GRDB transaction, kept open by a bridge while `body` runs. `open`
    /// hands the bridge's serving closure to GRDB's queue at once (no task in between) and tells the
    /// bridge when GRDB ended the transaction.
    private func run<T: Sendable>(
        _ body: @escaping @Sendable (any StorageTransaction) async throws -> T,
        transaction open: (DatabasePool, SQLiteTransactionBridge) -> Void
    ) async throws -> T {
        let bridge = SQLiteTransactionBridge()
        open(pool, bridge)
        // `body` runs on the bridge (the transaction's thread) and ends the transaction there, so
        // that its serving closure returns without waiting for another thread.
        let value: T
        do {
            value = try await withTaskExecutorPreference(bridge) {
                do {
                    let value = try await body(SQLiteTransaction(bridge: bridge))
                    bridge.finish(commit: true)
                    return value
                } catch {
                    bridge.finish(commit: false)
                    throw error
                }
            }
        } catch {
            try? await bridge.end()
            throw Self.storageError(error)
        }
        do {
            try await bridge.end()
        } catch {
            throw Self.storageError(error)
        }
        return value
    }

    static func storageError(_ error: any Error) -> any Error {
        if error is StorageError || error is CancellationError { return error }
        if let error = error as? DatabaseError {
            return StorageError(.backendFailure, "The SQLite transaction failed and was rolled back: \(error)")
        }
        return error
    }
}

/// One transaction of a ``SQLiteBackend``: each primitive runs its statements on the
/// transaction's connection.
struct SQLiteTransaction: StorageTransaction {
    let bridge: SQLiteTransactionBridge

    func run<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await bridge.perform(work)
    }

    // SQLite has one writer: transactions never overlap, so nothing needs locking and there are no
    // other nodes to tell.
    func lockContent(sha256: String) async throws {}
    func announce(_ event: StorageEvent) async throws {}
}
