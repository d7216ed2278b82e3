import Foundation

/// Immutable byte strings addressed by the SHA-256 of their bytes (lowercase hex): where
/// ``InstantStorage`` keeps the documents' PDFs.
///
/// Storing is idempotent and content-addressed, so several documents uploaded with the same PDF
/// share one copy. A blob store is not transactional: ``InstantStorage`` orders its calls so that a
/// committed document never points at a missing blob, and removes a blob only when no document
/// uses it (under ``StorageTransaction/lockContent(sha256:)``).
public protocol BlobStore: Sendable {
    /// Stores the bytes under their SHA-256 unless they are stored already. Returns whether it wrote
    /// them. When it returns, the bytes are durable.
    @discardableResult
    func put(_ data: Data, sha256: String) async throws -> Bool

    /// The size in bytes of the stored blob, or `nil` if there is none.
    func size(sha256: String) async throws -> Int?

    /// The bytes of a range of the stored blob (clamped to its size).
    /// - Throws: ``StorageError/Code/backendFailure`` if the blob is missing or unreadable.
    func read(sha256: String, range: Range<Int>) async throws -> Data

    /// Removes the blob; removing a missing blob does nothing.
    func delete(sha256: String) async throws
}

extension BlobStore {
    /// The whole blob, or `nil` if there is none.
    public func data(sha256: String) async throws -> Data? {
        guard let size = try await size(sha256: sha256) else { return nil }
        return try await read(sha256: sha256, range: 0..<size)
    }
}

/// SHA-256 keys as ``BlobStore`` and attachments use them.
enum ContentKey {
    /// Whether the text is a SHA-256 in lowercase hex (and so safe as a file name).
    static func isValid(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
