import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import PostgresNIO
import ServiceLifecycle

/// A ``StorageBackend`` in PostgreSQL, which several server nodes can share.
///
/// Its pool of connections does its work in ``run()``, which must be running for as long as the
/// backend is used (queries wait until it runs): add the backend to the server's `ServiceGroup`
/// (it is a `Service`) before the services that use it, so that it stops after them. Then call
/// ``migrate()`` once before the first transaction.
///
/// ```swift
/// let backend = try PostgresBackend(configuration: .init(url: "postgres://instant@db/instant"))
/// let group = ServiceGroup(services: [backend, server], logger: logger)
/// // in a task of the group's lifetime, before serving: try await backend.migrate()
/// ```
///
/// Write transactions run at `READ COMMITTED`: each statement sees what committed before it, so
/// once the row lock of ``StorageTransaction/layer(documentID:name:forUpdate:)`` is granted, the
/// transaction sees everything the previous writer of the layer committed, whichever node that
/// was. Read transactions run at `REPEATABLE READ, READ ONLY`, so all their statements see one
/// snapshot. ``StorageTransaction/announce(_:)`` tells the other nodes through `NOTIFY` at
/// commit, which ``events()`` receives. ``PostgresBlobStore`` keeps the PDFs in the same database.
public final class PostgresBackend: StorageBackend, Service {
    let configuration: Configuration
    let client: PostgresClient
    let logger: Logger
    /// Analyzes the records table as this node's writes make it grow.
    let recordStatistics: RecordStatistics

    /// Creates the backend. It connects only once ``run()`` runs.
    /// - Parameters:
    ///   - configuration: Where to connect, and the size of the pool.
    ///   - logger: Where the backend logs (connection trouble, the listener's reconnections).
    /// - Throws: ``StorageError/Code/backendFailure`` when the configuration cannot be used.
    public init(configuration: Configuration, logger: Logger = Logger(label: "instant.postgres")) throws {
        guard configuration.maximumConnections >= 1 else {
            throw StorageError(
                .backendFailure,
                "The PostgreSQL pool size is \(configuration.maximumConnections); it must be at least 1."
            )
        }
        self.configuration = configuration
        self.logger = logger
        let client = PostgresClient(
            configuration: configuration.clientConfiguration, eventLoopGroup: Self.eventLoopGroup,
            backgroundLogger: logger)
        self.client = client
        recordStatistics = RecordStatistics(logger: logger) {
            try await client.withConnection { connection in
                let transaction = PostgresTransaction(connection: connection, logger: logger)
                try await transaction.execute("ANALYZE records", "analyzing the records table")
                return try await transaction.value(
                    "SELECT reltuples::double precision FROM pg_class WHERE oid = 'records'::regclass", as: Double.self,
                    "reading the records table's estimated size") ?? 0
            }
        }
    }

    /// The event loop of the process's PostgreSQL connections (those of the pool): a thread of its
    /// own, shared by every backend of the process and never shut down, like SwiftNIO's singletons.
    ///
    /// A layer's groups follow each other, each a chain of statements whose answers wake the
    /// group's task. On the server's event loops, every link of that chain waited behind the HTTP
    /// and WebSocket work queued there (each layer's groups are a serial chain, so that wait is
    /// throughput lost); on a loop of their own, with the group's task running there too
    /// (``commitExecutor``), an answer goes on where it arrives.
    static let eventLoopGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    /// The executor of ``eventLoopGroup``'s loop, which write transactions and the tasks of group
    /// commits prefer.
    static let transactionExecutor = EventLoopTaskExecutor(eventLoopGroup.next())

    public var commitExecutor: (any TaskExecutor)? { Self.transactionExecutor }

    /// Runs the pool of connections until the task is cancelled or the service group shuts down.
    /// Call it once.
    public func run() async {
        await client.run()
    }

    public var description: String { "PostgreSQL \(configuration.redactedURL)" }

    /// Applies the migrations this database has not had yet (``migrate()``).
    public func prepare() async throws {
        let applied = try await migrate()
        if !applied.isEmpty {
            logger.info(
                "Migrated the PostgreSQL schema", metadata: ["migrations": "\(applied.joined(separator: ", "))"])
        }
    }

    /// The pool of connections (``run()``).
    public var services: [any Service] { [self] }

    /// `NOTIFY` on the database the nodes share.
    public var nodeChannel: (any NodeChannel)? { self }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any StorageTransaction) async throws -> T) async throws
        -> T
    {
        try await transaction(begin: "BEGIN", on: Self.transactionExecutor) { try await body($0) }
    }

    public func read<T: Sendable>(_ body: @escaping @Sendable (any StorageTransaction) async throws -> T) async throws
        -> T
    {
        try await transaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY") { try await body($0) }
    }

    /// Runs the one statement of `body` on a connection of the pool, outside a transaction.
    public func readStatement<T: Sendable>(
        _ body: @escaping @Sendable (any StorageTransaction) async throws -> T
    ) async throws -> T {
        try await outsideTransaction(on: nil, body)
    }

    /// Runs the group on a connection of the pool, outside a transaction.
    public func optimistically<T: Sendable>(
        _ body: @escaping @Sendable (any OptimisticTransaction) async throws -> T
    ) async throws -> T? {
        try await outsideTransaction(on: Self.transactionExecutor, body)
    }

    /// Runs `body` on a connection of the pool, outside a transaction, within
    /// ``Configuration/transactionTimeout``, preferring `executor`.
    private func outsideTransaction<T: Sendable>(
        on executor: EventLoopTaskExecutor?, _ body: @escaping @Sendable (PostgresTransaction) async throws -> T
    ) async throws -> T {
        try await withinTransactionTimeout(on: executor) { [self] in try await withConnection { try await body($0) } }
    }

    public func checkHealth() async throws {
        let timeout = configuration.healthCheckTimeout
        let action = "answering the health check (SELECT 1) at \(configuration.redactedURL)"
        let answered = try await Self.withTimeout(timeout) { [client, logger] in
            do {
                _ = try await client.query("SELECT 1", logger: logger).collect()
            } catch {
                throw Self.failure(error, while: action)
            }
        }
        guard answered != nil else {
            throw StorageError(
                .backendFailure,
                "PostgreSQL did not answer SELECT 1 within \(timeout) (\(configuration.redactedURL)). "
                    + "Check that the server is up and reachable, and not overloaded or out of connections."
            )
        }
    }

    /// Runs `body` in a transaction on one connection of the pool: `begin` starts it, `COMMIT` ends
    /// it when `body` returns, `ROLLBACK` when it throws. A transaction that takes longer than
    /// ``Configuration/transactionTimeout`` fails (its outcome unknown to the caller; PostgreSQL
    /// ends the session if it stays idle in the transaction) so that the requests behind it go on.
    /// `body` prefers `executor` (write transactions: ``transactionExecutor``).
    func transaction<T: Sendable>(
        begin: PostgresQuery,
        on executor: EventLoopTaskExecutor? = nil,
        _ body: @escaping @Sendable (PostgresTransaction) async throws -> T
    ) async throws -> T {
        try await withinTransactionTimeout(on: executor) { [self] in
            try await withConnection { transaction in
                try await transaction.execute(begin, "starting a transaction")
                let value: T
                do {
                    value = try await body(transaction)
                } catch {
                    do {
                        try await transaction.connection.query("ROLLBACK", logger: logger)
                    } catch {
                        // A connection that cannot roll back must not go back to the pool in a transaction.
                        try? await transaction.connection.close()
                    }
                    throw error
                }
                try await transaction.execute("COMMIT", "committing the transaction")
                return value
            }
        }
    }

    /// Runs `operation`, preferring `executor`, failing once it takes longer than
    /// ``Configuration/transactionTimeout``.
    private func withinTransactionTimeout<T: Sendable>(
        on executor: EventLoopTaskExecutor?, _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let timeout = configuration.transactionTimeout
        guard let outcome = try await Self.withTimeout(timeout, on: executor, operation) else {
            throw StorageError(
                .backendFailure,
                "A PostgreSQL transaction did not finish within \(timeout) (\(configuration.redactedURL)); the server "
                    + "stopped waiting for it, and whether it was applied is unknown (a client's retried push is "
                    + "applied once). Check the database's load and the network."
            )
        }
        return outcome
    }

    /// Runs `body` with a connection of the pool, outside a transaction: each statement commits
    /// on its own. The errors of `body` come out as they are; those of the pool as ``StorageError``.
    func withConnection<T: Sendable>(_ body: @Sendable (PostgresTransaction) async throws -> T) async throws -> T {
        do {
            return try await client.withConnection { connection in
                try await body(
                    PostgresTransaction(connection: connection, logger: logger, recordStatistics: recordStatistics))
            }
        } catch let error as PSQLError {
            throw Self.failure(error, while: "getting a connection from the pool (\(configuration.redactedURL))")
        }
    }

    /// The ``StorageError`` for an error of PostgreSQL or of the connection, with what the server said
    /// and what to do. Never contains the query's values or the password.
    static func failure(_ error: any Error, while action: String) -> StorageError {
        if let error = error as? StorageError { return error }
        if let error = error as? PostgresDecodingError {
            return StorageError(
                .corrupted,
                "A value PostgreSQL returned while \(action) cannot be read (\(error.code), column '\(error.columnName)' "
                    + "of type \(error.postgresType)); the database does not have the schema this server expects."
            )
        }
        guard let error = error as? PSQLError else {
            return StorageError(.backendFailure, "PostgreSQL failed while \(action): \(String(reflecting: error)).")
        }
        guard let server = error.serverInfo, let message = server[.message] else {
            var text = "PostgreSQL failed while \(action): \(error.code)"
            if let underlying = error.underlying { text += " (\(String(reflecting: underlying)))" }
            return StorageError(
                .backendFailure,
                text + ". Check that the server is up and reachable, and that the user and password are right."
            )
        }
        let state = server[.sqlState] ?? ""
        var text = "PostgreSQL failed while \(action): \(message) (SQLSTATE \(state))."
        if let detail = server[.detail] { text += " Detail: \(detail)" }
        if let hint = server[.hint] { text += " Hint: \(hint)" }
        return StorageError(.backendFailure, text + " " + advice(sqlState: state))
    }

    /// What to do about an error of the server, by its SQLSTATE.
    static func advice(sqlState: String) -> String {
        switch sqlState {
        case "42P01", "42703":
            "The schema is missing or old: run PostgresBackend.migrate() (the server does at startup)."
        case "53300":
            "The server has no connection slot left: lower the pool size of the server nodes or raise max_connections."
        case "40001", "40P01":
            "A concurrent transaction conflicted with this one; try again."
        case "28000", "28P01":
            "Check the user name and password of the PostgreSQL URL."
        case "3D000":
            "Create the database (CREATE DATABASE) or fix its name in the PostgreSQL URL."
        case let state where state.hasPrefix("08") || state.hasPrefix("57"):
            "The connection was lost or the server is shutting down; try again once PostgreSQL is back."
        default:
            "Nothing was written by this transaction; the PostgreSQL server log may say more."
        }
    }

    /// Runs `operation` and returns its value when it ends within `timeout`, `nil` once `timeout`
    /// passes first (the operation is then cancelled and left to end in the background: a
    /// connection that does not answer may not notice cancellation). The operation prefers
    /// `executor`, whose loop also keeps the time.
    static func withTimeout<T: Sendable>(
        _ timeout: Duration,
        on executor: EventLoopTaskExecutor? = nil,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T? {
        let pending = NIOLockedValueBox<CheckedContinuation<T?, any Error>?>(nil)
        @Sendable func finish(_ result: Result<T?, any Error>) {
            pending.withLockedValue { continuation in
                continuation?.resume(with: result)
                continuation = nil
            }
        }
        return try await withCheckedThrowingContinuation { continuation in
            pending.withLockedValue { $0 = continuation }
            let work = NIOLockedValueBox<Task<Void, Never>?>(nil)
            // A task scheduled on an event loop, cheap to start and to cancel (a sleeping task per
            // transaction cost a dispatch timer each).
            let (seconds, attoseconds) = timeout.components
            let timer = (executor?.eventLoop ?? PostgresClient.defaultEventLoopGroup.any()).scheduleTask(
                in: .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
            ) {
                finish(.success(nil))
                work.withLockedValue { $0?.cancel() }
            }
            work.withLockedValue { task in
                task = Task(executorPreference: executor) {
                    do {
                        finish(.success(try await operation()))
                    } catch {
                        finish(.failure(error))
                    }
                    timer.cancel()
                }
            }
        }
    }
}
