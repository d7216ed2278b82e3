import Foundation
import GRDB
import InstantJSON

/// The client's offline store: one SQLite database (WAL, synchronous commits) per data directory
/// holding every downloaded layer's records with their server and pending local versions, the push
/// in flight, and the PDFs as files beside it.
///
/// Every method is one transaction: an edit is durable when the method returns, so a process
/// killed at any moment loses no committed edit.
final class LocalStore: Sendable {
    let pool: DatabasePool
    let directory: URL
    /// This store's id towards the server (exactly-once pushes are per client id).
    let clientID: String

    /// The database file name inside the data directory.
    static let databaseFile = "instant.sqlite"

    /// Opens or creates the store in `directory`.
    /// - Throws: ``InstantError/Code/storageFailed`` when the directory or database cannot be used.
    init(directory: URL) throws(InstantError) {
        self.directory = directory
        do {
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent("pdfs"), withIntermediateDirectories: true)
            var configuration = Configuration()
            configuration.foreignKeysEnabled = true
            configuration.busyMode = .timeout(10)
            pool = try DatabasePool(
                path: directory.appendingPathComponent(Self.databaseFile).path, configuration: configuration)
            // A change is on the disk when `add` returns, even after a power loss. Set on the writer
            // once the pool has opened it: the pool turns WAL mode on after `prepareDatabase`, and
            // with it `synchronous` down to NORMAL, which flushes the log only at checkpoints.
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
            try Self.migrator.migrate(pool)
            clientID = try pool.write { db in
                if let id = try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'client_id'") { return id }
                let id = UUID().uuidString.lowercased()
                try db.execute(sql: "INSERT INTO meta (key, value) VALUES ('client_id', ?)", arguments: [id])
                return id
            }
        } catch {
            throw InstantError(
                .storageFailed,
                "Cannot open the local store in \(directory.path): \(error). Check that the directory is writable.")
        }
    }

    /// Runs a read.
    func read<T>(_ body: (Database) throws -> T) throws(InstantError) -> T {
        do { return try pool.read(body) } catch let error as InstantError { throw error } catch {
            throw InstantError(.storageFailed, "Reading the local store failed: \(error)")
        }
    }

    /// Runs one write transaction.
    func write<T>(_ body: (Database) throws -> T) throws(InstantError) -> T {
        do { return try pool.write(body) } catch let error as InstantError { throw error } catch {
            throw InstantError(.storageFailed, "Writing the local store failed and was rolled back: \(error)")
        }
    }
}
