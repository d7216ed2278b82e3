import Foundation
import Logging

extension InstantStorage {
    /// The embedded storage: a SQLite database and a directory of PDFs.
    /// - Throws: ``StorageError/Code/backendFailure`` when either cannot be opened.
    public static func sqlite(
        databasePath: String,
        pdfDirectory: URL,
        logger: Logger = Logger(label: "instant.storage")
    ) throws -> InstantStorage {
        InstantStorage(
            backend: try SQLiteBackend(path: databasePath, logger: logger),
            pdfs: try DirectoryBlobStore(directory: pdfDirectory),
            logger: logger
        )
    }

    /// The embedded storage in a data directory: `instant.sqlite` and `pdfs/` inside it.
    public static func sqlite(directory: URL, logger: Logger = Logger(label: "instant.storage")) throws
        -> InstantStorage
    {
        try sqlite(
            databasePath: directory.appendingPathComponent("instant.sqlite").path,
            pdfDirectory: directory.appendingPathComponent("pdfs", isDirectory: true),
            logger: logger
        )
    }
}
