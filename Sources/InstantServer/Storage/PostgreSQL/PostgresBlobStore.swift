import Foundation
import PostgresNIO

/// A ``BlobStore`` in the `pdf_blobs` table of a ``PostgresBackend``'s database, so that every
/// server node sees every PDF.
///
/// The bytes are stored out of line and uncompressed (`STORAGE EXTERNAL`): reading a range reads
/// only the chunks of that range, and the size is known without reading the bytes.
public struct PostgresBlobStore: BlobStore {
    let backend: PostgresBackend

    /// Creates the store on the backend's database (whose ``PostgresBackend/migrate()`` creates
    /// the table) and pool of connections.
    public init(backend: PostgresBackend) {
        self.backend = backend
    }

    @discardableResult
    public func put(_ data: Data, sha256: String) async throws -> Bool {
        // Looking first spares sending the bytes of a PDF that is stored already.
        if try await size(sha256: sha256) != nil { return false }
        return try await backend.withConnection { transaction in
            try await !transaction.rows(
                "INSERT INTO pdf_blobs (sha256, data) VALUES (\(sha256), \(data)) ON CONFLICT (sha256) DO NOTHING RETURNING 1",
                "storing the PDF \(sha256)"
            ).isEmpty
        }
    }

    public func size(sha256: String) async throws -> Int? {
        try await backend.withConnection { transaction in
            try await transaction.value(
                "SELECT octet_length(data) FROM pdf_blobs WHERE sha256 = \(sha256)",
                as: Int.self,
                "reading the size of the PDF \(sha256)"
            )
        }
    }

    public func read(sha256: String, range: Range<Int>) async throws -> Data {
        // substring counts from 1; bytea values are at most 1 GiB, within Int32.
        let start = Int32(clamping: max(0, range.lowerBound) + 1)
        let count = Int32(clamping: max(0, range.upperBound - max(0, range.lowerBound)))
        let data = try await backend.withConnection { transaction in
            try await transaction.map(
                "SELECT substring(data FROM \(start) FOR \(count)) FROM pdf_blobs WHERE sha256 = \(sha256)",
                "reading the PDF \(sha256)"
            ) { try $0.decode(Data.self) }.first
        }
        guard let data else {
            throw StorageError(
                .backendFailure,
                "The PDF \(sha256) is not in the pdf_blobs table of \(backend.configuration.redactedURL), "
                    + "though a document refers to it. Restore it from a backup, or delete and upload the document again."
            )
        }
        return data
    }

    public func delete(sha256: String) async throws {
        try await backend.withConnection { transaction in
            try await transaction.execute(
                "DELETE FROM pdf_blobs WHERE sha256 = \(sha256)",
                "removing the PDF \(sha256)"
            )
        }
    }
}
