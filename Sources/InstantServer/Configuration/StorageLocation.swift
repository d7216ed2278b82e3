import Foundation
import Logging

/// Where the server keeps its data, from `DATABASE_URL` (`--database`) or the data directory.
public enum StorageLocation: Sendable {
    /// An embedded SQLite database file and the directory of PDFs.
    case sqlite(databasePath: String, pdfDirectory: URL)
    /// A PostgreSQL database, which several server nodes can share; PDFs are stored in it too.
    case postgres(PostgresBackend.Configuration)

    /// Resolves the location.
    /// - Parameters:
    ///   - databaseURL: `postgres://user:password@host:port/database` (see
    ///     ``PostgresBackend/Configuration/init(url:)``), `sqlite:///absolute/path.sqlite`,
    ///     `sqlite://relative/path.sqlite`, `sqlite:path`, or `nil` for `<dataDirectory>/instant.sqlite`.
    ///   - dataDirectory: The data directory; with SQLite, PDFs go to its `pdfs/` folder.
    /// - Throws: ``StorageError`` with ``StorageError/Code/backendFailure`` for a URL that is not
    ///   understood, saying what is.
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
            return .postgres(try PostgresBackend.Configuration(url: databaseURL))
        }
        throw StorageError(
            .backendFailure,
            "The database URL is not understood; use postgres://user:password@host:5432/database or "
                + "sqlite:///path/to/instant.sqlite (or leave DATABASE_URL unset for SQLite in the data directory)."
        )
    }

    /// Opens the storage at this location. A PostgreSQL database is connected to and migrated when
    /// the server starts (its backend's services and ``StorageBackend/prepare()``).
    public func open(logger: Logger = Logger(label: "instant.storage")) throws -> InstantStorage {
        switch self {
        case .sqlite(let databasePath, let pdfDirectory):
            return try InstantStorage.sqlite(databasePath: databasePath, pdfDirectory: pdfDirectory, logger: logger)
        case .postgres(let configuration):
            let backend = try PostgresBackend(configuration: configuration, logger: logger)
            return InstantStorage(backend: backend, pdfs: PostgresBlobStore(backend: backend), logger: logger)
        }
    }

    /// What the location says in logs and the welcome message, without credentials.
    public var description: String {
        switch self {
        case .sqlite(let databasePath, _): "SQLite at \(databasePath)"
        case .postgres(let configuration): "PostgreSQL \(configuration.redactedURL)"
        }
    }
}
