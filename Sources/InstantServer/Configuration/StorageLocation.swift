import Foundation

/// Where the server keeps its data, from `DATABASE_URL` or the data directory.
public enum StorageLocation: Sendable, Hashable {
    /// An embedded SQLite database file and the directory of PDFs.
    case sqlite(databasePath: String, pdfDirectory: URL)

    /// Resolves the location.
    /// - Parameters:
    ///   - databaseURL: `sqlite:///absolute/path.sqlite`, `sqlite://relative/path.sqlite`,
    ///     `sqlite:path`, or `nil` for `<dataDirectory>/instant.sqlite`.
    ///   - dataDirectory: The data directory; PDFs go to its `pdfs/` folder.
    /// - Throws: ``StorageError`` with ``StorageError/Code/backendFailure`` for schemes this build
    ///   cannot serve (PostgreSQL comes later).
    public static func resolve(databaseURL: String?, dataDirectory: URL) throws -> StorageLocation {
        let pdfs = dataDirectory.appendingPathComponent("pdfs", isDirectory: true)
        guard let databaseURL, !databaseURL.isEmpty else {
            return .sqlite(
                databasePath: dataDirectory.appendingPathComponent("instant.sqlite").path, pdfDirectory: pdfs)
        }
        for prefix in ["sqlite://", "sqlite:"] where databaseURL.hasPrefix(prefix) {
            let path = String(databaseURL.dropFirst(prefix.count))
            guard !path.isEmpty else { break }
            return .sqlite(databasePath: path, pdfDirectory: pdfs)
        }
        if databaseURL.hasPrefix("postgres://") || databaseURL.hasPrefix("postgresql://") {
            throw StorageError(
                .backendFailure,
                "PostgreSQL storage is not available in this build yet; use sqlite:///path/to/instant.sqlite or leave DATABASE_URL unset."
            )
        }
        throw StorageError(
            .backendFailure,
            "DATABASE_URL '\(databaseURL)' is not understood; use sqlite:///path/to/instant.sqlite."
        )
    }

    /// Opens the storage at this location.
    public func open() throws -> InstantStorage {
        switch self {
        case .sqlite(let databasePath, let pdfDirectory):
            try InstantStorage.sqlite(databasePath: databasePath, pdfDirectory: pdfDirectory)
        }
    }
}
