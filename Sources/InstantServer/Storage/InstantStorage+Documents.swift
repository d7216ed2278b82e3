import Foundation
import InstantJSON

extension InstantStorage {
    /// Creates a document with its PDF, its attachments and its default layer `""` holding the base
    /// records with `initialChanges` applied, all in one transaction.
    ///
    /// Storing the same PDF bytes for several documents keeps one copy.
    /// - Throws: ``StorageError/Code/documentExists`` if the id is taken; the first failed condition
    ///   of `initialChanges` (and nothing is written).
    public func createDocument(
        _ document: StoredDocument,
        pdf: Data,
        baseRecords: [RecordWrite],
        initialChanges: [RecordChange] = [],
        attachments: [StoredAttachment] = []
    ) async throws {
        let now = clock()
        let pdfs = self.pdfs
        try await write { transaction in
            if try await transaction.document(id: document.id) != nil {
                throw StorageError(
                    .documentExists,
                    "A document with the id '\(document.id)' already exists. Delete it first or choose another id."
                )
            }
            // Under the content lock, no removal of an unused PDF with this key can run between
            // storing the bytes and committing the document that uses them.
            try await transaction.lockContent(sha256: document.sourcePDFSHA256)
            let wroteBlob = try await pdfs.put(pdf, sha256: document.sourcePDFSHA256)
            do {
                guard try await transaction.insertDocument(document) else {
                    throw StorageError(
                        .documentExists,
                        "A document with the id '\(document.id)' already exists. Delete it first or choose another id."
                    )
                }
                try await transaction.insertBaseRecords(documentID: document.id, baseRecords)
                let layer = try await Self.insertLayer(
                    transaction, documentID: document.id, name: "", source: .baseRecords, now: now)
                for attachment in attachments {
                    try await transaction.insertAttachment(documentID: document.id, attachment)
                }
                var revision = layer?.revision ?? 0
                if !initialChanges.isEmpty, let layer {
                    let records = GroupRecords()
                    revision = try await Self.commit(
                        initialChanges, to: layer, in: transaction, onConditionFailure: .abortBatch, now: now,
                        records: records
                    ).revision
                    try await records.flush(to: transaction, documentID: document.id, layer: "")
                    try await transaction.setRevision(documentID: document.id, layer: "", to: revision)
                }
                return ((), [.revisionChanged(documentID: document.id, layer: "", revision: revision)])
            } catch {
                // The transaction rolls back; a PDF stored for it alone goes too.
                if wroteBlob { try? await pdfs.delete(sha256: document.sourcePDFSHA256) }
                throw error
            }
        }
    }

    /// The document with the given id, or `nil`.
    public func document(id: String) async throws -> StoredDocument? {
        try await backend.read { try await $0.document(id: id) }
    }

    /// A page of the documents matching the query.
    public func listDocuments(_ query: DocumentQuery) async throws -> DocumentListing {
        try await backend.read { try await $0.documents(query) }
    }

    /// Deletes a document with its layers, records and attachments; its PDF goes when no other
    /// document uses it. Returns whether the document existed.
    public func deleteDocument(id: String) async throws -> Bool {
        let deleted: StoredDocument? = try await write { transaction in
            guard let document = try await transaction.document(id: id) else { return (nil, []) }
            let layers = try await transaction.layers(documentID: id)
            _ = try await transaction.deleteDocument(id: id)
            return (document, layers.map { .layerRemoved(documentID: id, layer: $0.name) })
        }
        guard let deleted else { return false }
        try await removePDFIfUnused(sha256: deleted.sourcePDFSHA256)
        return true
    }

    /// Removes a PDF that no document uses any more. Runs after the deletion committed, in its own
    /// transaction holding the content lock, so that it cannot race a document being created with
    /// the same PDF (which stores the bytes again if they went just before).
    func removePDFIfUnused(sha256: String) async throws {
        let pdfs = self.pdfs
        try await backend.write { transaction in
            try await transaction.lockContent(sha256: sha256)
            if try await !transaction.isPDFReferenced(sha256: sha256) {
                try await pdfs.delete(sha256: sha256)
            }
        }
    }

    /// The PDF bytes stored under the SHA-256 (lowercase hex), or `nil`.
    public func pdf(sha256: String) async throws -> Data? {
        guard ContentKey.isValid(sha256) else { return nil }
        return try await pdfs.data(sha256: sha256)
    }

    /// The base records imported from the document's PDF at upload.
    public func baseRecords(documentID: String) async throws -> [StoredRecord] {
        try await backend.read { try await $0.baseRecords(documentID: documentID) }
    }

    // MARK: Attachments

    /// Stores an attachment of a document under the SHA-256 of its bytes; storing the same bytes
    /// again is a no-op. Returns the SHA-256 (lowercase hex).
    /// - Throws: ``StorageError/Code/documentNotFound``.
    @discardableResult
    public func putAttachment(documentID: String, data: Data, contentType: String) async throws -> String {
        let attachment = StoredAttachment(sha256: Attachment.key(for: data), contentType: contentType, data: data)
        try await backend.write { transaction in
            _ = try await Self.requireDocument(transaction, documentID)
            try await transaction.insertAttachment(documentID: documentID, attachment)
        }
        return attachment.sha256
    }

    /// The attachment of the document with the given SHA-256, or `nil`.
    public func attachment(documentID: String, sha256: String) async throws -> StoredAttachment? {
        try await backend.read { try await $0.attachment(documentID: documentID, sha256: sha256) }
    }

    /// An attachment of the document to send: its content type and size, and a reader of its
    /// bytes part by part (each part one statement), so that it is never loaded whole; `nil` when the
    /// document has no such attachment.
    public func attachmentContent(documentID: String, sha256: String) async throws -> AttachmentContent? {
        guard
            let (contentType, byteSize) = try await backend.readStatement({
                try await $0.attachmentInfo(documentID: documentID, sha256: sha256)
            })
        else { return nil }
        return AttachmentContent(sha256: sha256, contentType: contentType, byteSize: byteSize) { [backend] range in
            guard
                let bytes = try await backend.readStatement({
                    try await $0.attachmentBytes(documentID: documentID, sha256: sha256, range: range)
                })
            else {
                throw StorageError(
                    .recordNotFound,
                    "The attachment \(sha256) of the document '\(documentID)' was removed while it was being sent.")
            }
            return bytes
        }
    }

    /// Which of the given attachment keys the document has.
    public func attachmentKeys(documentID: String, among keys: [String]) async throws -> Set<String> {
        guard !keys.isEmpty else { return [] }
        return try await backend.read { try await $0.attachmentKeys(documentID: documentID, among: keys) }
    }

    // MARK: Token revocation

    /// Records token ids (`jti`) as revoked.
    public func revokeTokens(ids: [String]) async throws {
        let now = clock()
        try await write { transaction in
            try await transaction.revokeTokens(ids: ids, at: now)
            return ((), ids.isEmpty ? [] : [.tokensRevoked(ids)])
        }
    }

    /// Whether a token id was revoked.
    public func isTokenRevoked(id: String) async throws -> Bool {
        try await backend.read { try await $0.isTokenRevoked(id: id) }
    }
}
