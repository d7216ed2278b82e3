import Foundation

/// The persistence of an Instant server: documents and their PDFs, layers with their revision
/// counters, records with tombstones, attachments and revoked tokens.
///
/// Every method that writes commits one transaction: either all of its effects are durable when it
/// returns, or none are. Implementations must be safe to call concurrently. Nothing here assumes a
/// particular database; ``SQLiteStorage`` is the embedded implementation.
public protocol InstantStorage: Sendable {
    // MARK: Documents

    /// Creates a document with its PDF, its attachments and its default layer `""` holding the base
    /// records with `initialChanges` applied, all in one transaction.
    ///
    /// Storing the same PDF bytes for several documents keeps one copy.
    /// - Throws: ``StorageError/Code/documentExists`` if the id is taken; the first failed condition
    ///   of `initialChanges` (and nothing is written).
    func createDocument(
        _ document: StoredDocument,
        pdf: Data,
        baseRecords: [RecordWrite],
        initialChanges: [RecordChange],
        attachments: [StoredAttachment]
    ) async throws

    /// The document with the given id, or `nil`.
    func document(id: String) async throws -> StoredDocument?

    /// A page of the documents matching the query.
    func listDocuments(_ query: DocumentQuery) async throws -> DocumentListing

    /// Deletes a document with its layers, records and attachments; its PDF goes when no other
    /// document uses it. Returns whether the document existed.
    func deleteDocument(id: String) async throws -> Bool

    /// The PDF bytes stored under the SHA-256 (lowercase hex), or `nil`.
    func pdf(sha256: String) async throws -> Data?

    /// The base records imported from the document's PDF at upload.
    func baseRecords(documentID: String) async throws -> [StoredRecord]

    // MARK: Layers

    /// The layers of a document, by name.
    /// - Throws: ``StorageError/Code/documentNotFound``.
    func layers(documentID: String) async throws -> [StoredLayer]

    /// The layer, or `nil` if the document has no layer of that name.
    func layer(documentID: String, name: String) async throws -> StoredLayer?

    /// Creates a layer from the given source.
    /// - Throws: ``StorageError/Code/documentNotFound``, ``StorageError/Code/layerExists``,
    ///   ``StorageError/Code/layerNotFound`` (for a missing source layer).
    @discardableResult
    func createLayer(documentID: String, name: String, source: LayerSource) async throws -> StoredLayer

    /// Returns the layer, creating it from the base records if it does not exist yet.
    /// - Throws: ``StorageError/Code/documentNotFound``.
    func layerCreatingIfNeeded(documentID: String, name: String) async throws -> StoredLayer

    /// Deletes a layer and its records. Returns whether it existed.
    func deleteLayer(documentID: String, name: String) async throws -> Bool

    // MARK: Records

    /// The live (not deleted) records of a layer, optionally of one kind, ordered by id.
    /// - Throws: ``StorageError/Code/layerNotFound``.
    func records(documentID: String, layer: String, kind: RecordKind?) async throws -> [StoredRecord]

    /// The record with the given id (tombstones included), or `nil`.
    /// - Throws: ``StorageError/Code/layerNotFound``.
    func record(documentID: String, layer: String, id: String) async throws -> StoredRecord?

    /// The layer's current revision and every record (tombstones included) changed after `revision`.
    /// - Throws: ``StorageError/Code/layerNotFound``.
    func changes(documentID: String, layer: String, since revision: Int64) async throws -> LayerChanges

    /// Applies a batch of changes in one transaction. When at least one change applies, the layer
    /// revision goes up by one and every applied record carries the new revision.
    ///
    /// With a `push`, the batch is applied exactly once: the last push id of the push's
    /// ``ClientIdentity`` (client id and user together) is stored in the same transaction, and a
    /// push whose id is not above it writes nothing and comes back with
    /// ``CommitResult/isDuplicatePush`` set.
    /// - Throws: ``StorageError/Code/layerNotFound``; ``StorageError/Code/pushOutOfRange`` for a push
    ///   id too far above the last one (``ClientPush/stepProblem(after:)``; nothing is written); with
    ///   ``ConditionFailurePolicy/abortBatch``, the first failed condition's error (and nothing is
    ///   written).
    func apply(
        _ changes: [RecordChange],
        documentID: String,
        layer: String,
        push: ClientPush?,
        onConditionFailure: ConditionFailurePolicy
    ) async throws -> CommitResult

    /// Decides and applies a batch in one write transaction: `decide` reads the layer as it is at
    /// commit time and returns the changes to apply (failed conditions are skipped, not thrown).
    ///
    /// With a `push` whose id is not above the client's last one, `decide` is not called, nothing is
    /// written, and the result has ``CommitResult/isDuplicatePush`` set and no outcome.
    /// - Throws: ``StorageError/Code/layerNotFound``; ``StorageError/Code/pushOutOfRange`` (see
    ///   above); whatever `decide` throws (nothing is written).
    func apply<Outcome: Sendable>(
        documentID: String,
        layer: String,
        push: ClientPush?,
        deciding decide: @escaping @Sendable (any LayerTransactionReader) throws -> LayerDecision<Outcome>
    ) async throws -> (result: CommitResult, outcome: Outcome?)

    /// The last push id applied for a client (its id within its user's scope) on a layer, or `nil`
    /// if none.
    func lastPushID(documentID: String, layer: String, client: ClientIdentity) async throws -> Int64?

    // MARK: Attachments

    /// Stores an attachment of a document under the SHA-256 of its bytes; storing the same bytes
    /// again is a no-op. Returns the SHA-256 (lowercase hex).
    /// - Throws: ``StorageError/Code/documentNotFound``.
    @discardableResult
    func putAttachment(documentID: String, data: Data, contentType: String) async throws -> String

    /// The attachment of the document with the given SHA-256, or `nil`.
    func attachment(documentID: String, sha256: String) async throws -> StoredAttachment?

    // MARK: Token revocation

    /// Records token ids (`jti`) as revoked.
    func revokeTokens(ids: [String]) async throws

    /// Whether a token id was revoked.
    func isTokenRevoked(id: String) async throws -> Bool
}

extension InstantStorage {
    /// Creates a document with its PDF and its default layer `""` holding the base records.
    public func createDocument(_ document: StoredDocument, pdf: Data, baseRecords: [RecordWrite]) async throws {
        try await createDocument(document, pdf: pdf, baseRecords: baseRecords, initialChanges: [], attachments: [])
    }

    /// Applies a batch of changes in one transaction, without push de-duplication.
    public func apply(
        _ changes: [RecordChange],
        documentID: String,
        layer: String,
        onConditionFailure: ConditionFailurePolicy
    ) async throws -> CommitResult {
        try await apply(
            changes, documentID: documentID, layer: layer, push: nil, onConditionFailure: onConditionFailure)
    }
}
