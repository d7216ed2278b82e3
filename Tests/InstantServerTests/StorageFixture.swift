import Foundation
import InstantTesting
import Synchronization
import Testing

@testable import InstantServer

/// The storage backends every storage test runs against.
enum StorageKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    /// The backends the storage tests run on here: PostgreSQL only where it is installed (the
    /// PostgreSQL backend suite says when it is skipped), or where it is required (its cases then
    /// fail with the reason).
    static var available: [StorageKind] {
        (try? PostgresAvailability.isAvailable()) == false ? [.sqlite] : allCases
    }
}

/// A fresh, empty storage of one backend for one test, which can be opened again over the same
/// data (as a restarted server would) and removed at the end.
///
/// The PostgreSQL case runs on a new database of the process's shared ``PostgresTestServer``.
final class StorageFixture: Sendable {
    let kind: StorageKind
    let storage: InstantStorage
    private let location: Location
    private let pools: PoolTasks

    private enum Location {
        case directory(TemporaryDirectory)
        case database(url: String)
    }

    /// The PostgreSQL pools the fixture opened, run until ``remove()``.
    private final class PoolTasks: Sendable {
        let tasks = Mutex<[Task<Void, Never>]>([])
    }

    init(_ kind: StorageKind) async throws {
        self.kind = kind
        pools = PoolTasks()
        switch kind {
        case .sqlite:
            let directory = try TemporaryDirectory()
            location = .directory(directory)
        case .postgres:
            guard try PostgresAvailability.isAvailable() else {
                try Test.cancel(Comment(rawValue: PostgresAvailability.absence))
            }
            location = .database(url: try await PostgresTestServer.shared().makeDatabase())
        }
        storage = try await Self.open(location, pools: pools)
    }

    private static func open(
        _ location: Location, pools: PoolTasks, clock: @escaping @Sendable () -> Date = { Date() }
    ) async throws -> InstantStorage {
        switch location {
        case .directory(let directory):
            return try InstantStorage.sqlite(directory: directory.url, clock: clock)
        case .database(let url):
            var configuration = try PostgresBackend.Configuration(url: url)
            configuration.maximumConnections = 4
            let backend = try PostgresBackend(configuration: configuration, logger: quietLogger)
            pools.tasks.withLock { $0.append(Task { await backend.run() }) }
            _ = try await backend.migrate()
            return InstantStorage(backend: backend, pdfs: PostgresBlobStore(backend: backend), clock: clock)
        }
    }

    /// A second storage over the same data (as another server node, or the server restarted),
    /// whose time is `clock`'s.
    func reopened(clock: @escaping @Sendable () -> Date = { Date() }) async throws -> InstantStorage {
        try await Self.open(location, pools: pools, clock: clock)
    }

    func remove() {
        for task in pools.tasks.withLock({ $0 }) { task.cancel() }
        if case .directory(let directory) = location { directory.remove() }
    }
}
