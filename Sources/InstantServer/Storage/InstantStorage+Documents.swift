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
                    let records = GroupRecords(flushes: true)
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

    /// Copies a document under a new id in one transaction: the same PDF (stored once), its base
    /// records, and its layers' live records, each copied layer starting at revision 1 (tombstones
    /// and the clients' push history stay with the original). With `layer`, only that layer is
    /// copied, as the copy's default layer. `initialChanges` are then applied to the copy's default
    /// layer. Attachments that the copied records use (`imageAttachmentId`) are copied with them;
    /// `attachments` are added.
    /// - Returns: The copy.
    /// - Throws: ``StorageError/Code/documentNotFound``, ``StorageError/Code/layerNotFound``
    ///   (`layer` does not exist), ``StorageError/Code/documentExists`` (the new id is taken), or
    ///   the first failed condition of `initialChanges` (and nothing is written).
    public func copyDocument(
        id sourceID: String,
        to copyID: String,
        layer onlyLayer: String? = nil,
        initialChanges: [RecordChange] = [],
        attachments: [StoredAttachment] = []
    ) async throws -> StoredDocument {
        let now = clock()
        return try await write { transaction in
            guard let source = try await transaction.document(id: sourceID) else {
                throw StorageError(.documentNotFound, "No document has the id '\(sourceID)'.")
            }
            var copy = source
            copy.id = copyID
            copy.createdAt = now
            try await transaction.lockContent(sha256: source.sourcePDFSHA256)
            guard try await transaction.insertDocument(copy) else {
                throw StorageError(
                    .documentExists,
                    "A document with the id '\(copyID)' already exists. Delete it first or choose another id.")
            }
            let base = try await transaction.baseRecords(documentID: sourceID)
            try await transaction.insertBaseRecords(
                documentID: copyID,
                base.map {
                    RecordWrite(
                        id: $0.id, kind: $0.kind, group: $0.group, user: $0.createdBy, pdfObjectID: $0.pdfObjectID,
                        content: $0.content)
                })
            var layers = try await transaction.layers(documentID: sourceID).map { (source: $0.name, copy: $0.name) }
            if let onlyLayer {
                guard layers.contains(where: { $0.source == onlyLayer }) else {
                    throw StorageError(.layerNotFound, "The document '\(sourceID)' has no layer '\(onlyLayer)'.")
                }
                layers = [(onlyLayer, "")]
            }
            var attachmentKeys = Set<String>()
            var events: [StorageEvent] = []
            for (sourceName, copyName) in layers {
                let records = try await transaction.liveRecords(documentID: sourceID, layer: sourceName, kind: nil)
                guard try await transaction.insertLayer(documentID: copyID, name: copyName, revision: 0) else {
                    continue
                }
                let rows = records.map { original in
                    var record = original
                    record.revision = 1
                    return RecordRow(record: record, threadRoot: Self.threadRoot(of: record))
                }
                try await transaction.upsert(rows, documentID: copyID, layer: copyName)
                if !rows.isEmpty {
                    try await transaction.setRevision(documentID: copyID, layer: copyName, to: 1)
                }
                for record in records {
                    if let key = (try? JSONValue.parse(record.content))?["imageAttachmentId"]?.stringValue {
                        attachmentKeys.insert(key)
                    }
                }
                events.append(.revisionChanged(documentID: copyID, layer: copyName, revision: rows.isEmpty ? 0 : 1))
            }
            for key in attachmentKeys.sorted() {
                if let attachment = try await transaction.attachment(documentID: sourceID, sha256: key) {
                    try await transaction.insertAttachment(documentID: copyID, attachment)
                }
            }
            for attachment in attachments {
                try await transaction.insertAttachment(documentID: copyID, attachment)
            }
            if !initialChanges.isEmpty {
                guard let layer = try await transaction.lockLayer(documentID: copyID, name: "")?.layer else {
                    throw StorageError(.layerNotFound, "The copy of '\(sourceID)' has no default layer.")
                }
                let records = GroupRecords(flushes: true)
                let revision = try await Self.commit(
                    initialChanges, to: layer, in: transaction, onConditionFailure: .abortBatch, now: now,
                    records: records
                ).revision
                try await records.flush(to: transaction, documentID: copyID, layer: "")
                try await transaction.setRevision(documentID: copyID, layer: "", to: revision)
                events.append(.revisionChanged(documentID: copyID, layer: "", revision: revision))
            }
            return (copy, events)
        }
    }

    /// The document with the given id, or `nil`.
    public func document(id: String) async throws -> StoredDocument? {
        try await backend.readStatement { try await $0.document(id: id) }
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

    /// Stores an attachment of a document under the SHA-256 of its bytes (hashed off the event loop
    /// when they are many, ``LargeWork``); storing the same bytes again is a no-op. Returns the
    /// SHA-256 (lowercase hex).
    /// - Throws: ``StorageError/Code/documentNotFound``.
    @discardableResult
    public func putAttachment(documentID: String, data: Data, contentType: String) async throws -> String {
        let sha256 = try await LargeWork.run(bytes: data.count) { Attachment.key(for: data) }
        try await putAttachment(
            documentID: documentID, StoredAttachment(sha256: sha256, contentType: contentType, data: data))
        return sha256
    }

    /// Stores an attachment whose ``StoredAttachment/sha256`` the caller made from its bytes (an
    /// upload checked against the hash it was named by, an import that hashed while it checked),
    /// so that they are not hashed again.
    /// - Throws: ``StorageError/Code/documentNotFound``.
    func putAttachment(documentID: String, _ attachment: StoredAttachment) async throws {
        try await backend.write { transaction in
            _ = try await Self.requireDocument(transaction, documentID)
            try await transaction.insertAttachment(documentID: documentID, attachment)
        }
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
        return try await backend.readStatement { try await $0.attachmentKeys(documentID: documentID, among: keys) }
    }

    // MARK: Token revocation

    /// Records token ids (`jti`) as revoked; this node knows it once this returns, the other nodes
    /// when its notification reaches them (``noteRevoked(_:)``).
    public func revokeTokens(ids: [String]) async throws {
        let now = clock()
        try await write { transaction in
            try await transaction.revokeTokens(ids: ids, at: now)
            return ((), ids.isEmpty ? [] : [.tokensRevoked(ids)])
        }
        revocations.noteRevoked(ids)
    }

    /// Whether a token id was revoked. An id found not revoked is read again after at most
    /// ``TokenRevocations/recheckInterval`` (one second), or at once with `fromDatabase`; a
    /// revocation made through this node or heard from another counts at once
    /// (``TokenRevocations``).
    public func isTokenRevoked(id: String, fromDatabase: Bool = false) async throws -> Bool {
        let now = clock()
        if !fromDatabase, let known = revocations.isRevoked(id, at: now) { return known }
        let revoked = try await backend.readStatement { try await $0.isTokenRevoked(id: id) }
        revocations.noteRead(id, revoked: revoked, startedAt: now)
        return revoked
    }

    /// Whether a token id was revoked, when this node knows it without reading the database (as
    /// ``isTokenRevoked(id:fromDatabase:)`` would take it); `nil` when it has to be read.
    func knownRevocation(ofTokenID id: String) -> Bool? {
        revocations.isRevoked(id, at: clock())
    }

    /// Notes token ids revoked through another node (its notification), which this node's
    /// requests then refuse at once.
    public func noteRevoked(_ ids: [String]) {
        revocations.noteRevoked(ids)
    }
}
