import Foundation
import GRDB
import Logging
import ServiceLifecycle

/// The embedded backend: one SQLite database in WAL mode, through a GRDB `DatabasePool`.
///
/// Write transactions follow each other (SQLite's single writer), so the revision a commit reads
/// under ``StorageTransaction/layer(documentID:name:forUpdate:)`` is the one it raises; reads run
/// beside writes on their own snapshots.
public final class SQLiteBackend: StorageBackend {
    let pool: DatabasePool
    let path: String

    /// Opens (creating if needed) the database and migrates its schema.
    /// - Throws: ``StorageError/Code/backendFailure`` when the file cannot be opened or migrated.
    public init(path: String) throws {
        self.path = path
        do {
            let parent = URL(fileURLWithPath: path).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
            var configuration = Configuration()
            configuration.foreignKeysEnabled = true
            configuration.busyMode = .timeout(10)
            configuration.label = "instant"
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
            }
            pool = try DatabasePool(path: path, configuration: configuration)
            try Self.migrator.migrate(pool)
        } catch {
            throw StorageError(
                .backendFailure,
                "Cannot open the SQLite database at \(path): \(error). "
                    + "Check that the directory is writable and the file is an Instant database."
            )
        }
    }

    public var description: String { "SQLite at \(path)" }

    /// Nothing to do: the schema was migrated when the backend opened.
    public func prepare() async throws {}

    /// None: SQLite runs inside the server's process.
    public var services: [any Service] { [] }

    /// None: an embedded database serves one node.
    public var nodeChannel: (any NodeChannel)? { nil }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any StorageTransaction) async throws -> T) async throws
        -> T
    {
        try await run(body) { pool, serve in try await pool.write(serve) }
    }

    public func read<T: Sendable>(_ body: @escaping @Sendable (any StorageTransaction) async throws -> T) async throws
        -> T
    {
        try await run(body) { pool, serve in try await pool.read(serve) }
    }

    public func checkHealth() async throws {
        try await read { transaction in _ = try await transaction.isTokenRevoked(id: "") }
    }

    /// Runs `body` against one GRDB transaction, kept open by a bridge while `body` runs.
    private func run<T: Sendable>(
        _ body: @escaping @Sendable (any StorageTransaction) async throws -> T,
        transaction open:
            @escaping @Sendable (DatabasePool, @escaping @Sendable (Database) throws -> Void)
            async throws -> Void
    ) async throws -> T {
        let bridge = SQLiteTransactionBridge()
        let pool = self.pool
        // Not a child task: cancelling the caller must not keep GRDB from opening the transaction
        // that the caller's primitives wait for.
        let server = Task {
            do {
                try await open(pool) { db in try bridge.serve(db) }
            } catch {
                bridge.abandon(because: error)
                throw error
            }
        }
        let value: T
        do {
            value = try await body(SQLiteTransaction(bridge: bridge))
        } catch {
            bridge.finish(commit: false)
            _ = await server.result
            throw Self.storageError(error)
        }
        bridge.finish(commit: true)
        do {
            try await server.value
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
