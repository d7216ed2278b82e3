import Foundation
import InstantServer
import InstantTesting
import Logging
import Testing

/// Whether the PostgreSQL tests run. They need PostgreSQL's programs (``PostgresTestServer``
/// starts a throwaway server); without them the tests carrying the `.postgres` trait are skipped
/// with ``absence``, or fail with ``Missing`` when `OPENINSTANT_REQUIRE_POSTGRES=1` (as `.ci/run`
/// sets).
enum PostgresAvailability {
    /// The environment variable that, set to anything but empty or `0`, makes missing PostgreSQL a
    /// failure of the PostgreSQL tests instead of a reason to skip them.
    static let requirementVariable = "OPENINSTANT_REQUIRE_POSTGRES"

    /// Whether `OPENINSTANT_REQUIRE_POSTGRES` is set to something other than empty or `0`.
    static let isRequired: Bool = {
        let requirement = ProcessInfo.processInfo.environment[requirementVariable] ?? ""
        return !requirement.isEmpty && requirement != "0"
    }()

    /// Why the PostgreSQL tests are skipped, and how to run them.
    static let absence =
        "PostgreSQL is not installed (apt-get install postgresql); the PostgreSQL tests are skipped. "
        + "\(requirementVariable)=1 (set by .ci/run) makes them fail instead."

    /// Missing PostgreSQL where it is required, reported as the failure of each PostgreSQL test.
    struct Missing: Error, CustomStringConvertible {
        var reason: String
        var description: String { "PostgreSQL is required (\(requirementVariable) is set), but \(reason)" }
    }

    /// Whether the PostgreSQL tests run.
    /// - Throws: ``Missing`` when PostgreSQL is not installed and ``isRequired``.
    static func isAvailable() throws -> Bool {
        do {
            _ = try PostgresTestServer.findBinaries()
            return true
        } catch {
            if isRequired { throw Missing(reason: "\(error)") }
            return false
        }
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs a test (or every test of a suite) that needs a real PostgreSQL only where PostgreSQL is
    /// installed: skipped with ``PostgresAvailability/absence`` without it, failed with
    /// ``PostgresAvailability/Missing`` when it is required.
    static var postgres: Self {
        .enabled(if: try PostgresAvailability.isAvailable(), Comment(rawValue: PostgresAvailability.absence))
    }
}

/// A logger for backends in tests: errors only (PostgresNIO warns of leases made while the pool's
/// task is still starting, and logs each refused connection).
let quietLogger = {
    var logger = Logger(label: "instant.postgres-tests")
    logger.logLevel = .error
    return logger
}()

/// Runs `body` with a migrated backend on a new, empty database of `server` (the process's shared
/// test server by default), or on the `database` at that URL, its pool (of 4 connections, then as
/// `configure` says) running for the time of `body`.
func withPostgresBackend<T: Sendable>(
    on server: PostgresTestServer? = nil,
    database: String? = nil,
    configure: (inout PostgresBackend.Configuration) -> Void = { _ in },
    _ body: (PostgresBackend) async throws -> T
) async throws -> T {
    let url: String
    if let database {
        url = database
    } else {
        let server = if let server { server } else { try await PostgresTestServer.shared() }
        url = try await server.makeDatabase()
    }
    var configuration = try PostgresBackend.Configuration(url: url)
    configuration.maximumConnections = 4
    configure(&configuration)
    let backend = try PostgresBackend(configuration: configuration, logger: quietLogger)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await backend.run() }
        defer { group.cancelAll() }
        try await backend.migrate()
        return try await body(backend)
    }
}
