import Foundation
import GRDB
import Logging

/// The embedded storage: one SQLite database (WAL mode, through a GRDB `DatabasePool`) plus a
/// directory of PDFs named by their SHA-256.
///
/// Writes are serialized by SQLite's single writer; each public write method is one transaction.
/// PDF files are written (and removed) inside the write transaction that references them, so a
/// document row never points at a missing file.
public final class SQLiteStorage: InstantStorage {
    let pool: DatabasePool
    let pdfDirectory: URL
    let logger: Logger

    /// Opens (creating if needed) the storage and migrates its schema.
    /// - Parameters:
    ///   - databasePath: The SQLite database file.
    ///   - pdfDirectory: The directory of PDF files; created if missing.
    ///   - logger: Where the storage logs.
    public init(databasePath: String, pdfDirectory: URL, logger: Logger = Logger(label: "instant.storage")) throws {
        self.logger = logger
        self.pdfDirectory = pdfDirectory
        do {
            try FileManager.default.createDirectory(at: pdfDirectory, withIntermediateDirectories: true)
            let parent = URL(fileURLWithPath: databasePath).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
            var configuration = Configuration()
            configuration.foreignKeysEnabled = true
            configuration.busyMode = .timeout(10)
            configuration.label = "instant"
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
            }
            pool = try DatabasePool(path: databasePath, configuration: configuration)
            try Self.migrator.migrate(pool)
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(
                .backendFailure,
                "Cannot open the SQLite storage at \(databasePath): \(error). "
                    + "Check that the directory is writable and the file is an Instant database."
            )
        }
    }

    /// Opens the storage in a data directory: `instant.sqlite` and `pdfs/` inside it.
    public convenience init(directory: URL, logger: Logger = Logger(label: "instant.storage")) throws {
        try self.init(
            databasePath: directory.appendingPathComponent("instant.sqlite").path,
            pdfDirectory: directory.appendingPathComponent("pdfs", isDirectory: true),
            logger: logger
        )
    }

    /// Runs a read, mapping database errors to ``StorageError``.
    func read<T: Sendable>(_ body: @Sendable @escaping (Database) throws -> T) async throws -> T {
        do {
            return try await pool.read(body)
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(.backendFailure, "The database read failed: \(error)")
        }
    }

    /// Runs one write transaction, mapping database errors to ``StorageError``.
    func write<T: Sendable>(_ body: @Sendable @escaping (Database) throws -> T) async throws -> T {
        do {
            return try await pool.write(body)
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(.backendFailure, "The database write failed and was rolled back: \(error)")
        }
    }
}
