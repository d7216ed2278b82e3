import Foundation
import Logging

extension InstantStorage {
    /// The embedded storage: a SQLite database and a directory of PDFs, its time `clock`'s.
    /// - Throws: ``StorageError/Code/backendFailure`` when either cannot be opened.
    public static func sqlite(
        databasePath: String,
        pdfDirectory: URL,
        logger: Logger = Logger(label: "instant.storage"),
        clock: @escaping @Sendable () -> Date = { Date() }
    ) throws -> InstantStorage {
        InstantStorage(
            backend: try SQLiteBackend(path: databasePath, logger: logger),
            pdfs: try DirectoryBlobStore(directory: pdfDirectory),
            logger: logger,
            clock: clock
        )
    }

    /// The embedded storage in a data directory: `instant.sqlite` and `pdfs/` inside it.
    public static func sqlite(
        directory: URL, logger: Logger = Logger(label: "instant.storage"),
        clock: @escaping @Sendable () -> Date = { Date() }
    ) throws -> InstantStorage {
        try sqlite(
            databasePath: directory.appendingPathComponent("instant.sqlite").path,
            pdfDirectory: directory.appendingPathComponent("pdfs", isDirectory: true),
            logger: logger,
            clock: clock
        )
    }
}
