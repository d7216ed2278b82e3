import Foundation
import Logging
import Synchronization

/// The persistence of an Instant server: documents and their PDFs, layers with their revision
/// counters, records with tombstones, attachments and revoked tokens.
///
/// `InstantStorage` is the one place where the rules of a commit live, written once for every
/// database: a push applies exactly once per client; conditions are checked against the records as
/// they are at commit time; a deletion wins over a later edit based on an older revision; deleted
/// records stay as tombstones; the server keeps who created a record; every commit that changes a
/// layer raises its revision by one; deleting an annotation deletes its comment thread; a new layer
/// starts from the document's base records at revision 1. REST and sync both write through
/// ``apply(_:documentID:layer:push:onConditionFailure:)`` and
/// ``apply(documentID:layer:push:deciding:)``.
///
/// What it stores goes to a ``StorageBackend`` (its SQL: ``SQLiteBackend``, ``PostgresBackend``)
/// and a ``BlobStore`` for PDFs. Every method that writes is one transaction of the backend: all of
/// its effects are durable when it returns, or none are. Observers learn of each committed change
/// (``StorageObserver``), whoever made it.
public final class InstantStorage: Sendable {
    /// The database of documents, layers, records and revocations.
    public let backend: any StorageBackend
    /// Where the documents' PDFs are kept.
    public let pdfs: any BlobStore
    let logger: Logger
    let clock: @Sendable () -> Date
    private let observers = Mutex<[any StorageObserver]>([])
    let commitQueue = LayerCommitQueue()
    /// What this node knows of token revocations.
    let revocations = TokenRevocations()

    /// Creates the storage over a backend and a blob store.
    /// - Parameters:
    ///   - backend: The database.
    ///   - pdfs: Where PDFs are kept.
    ///   - logger: Where the storage logs.
    ///   - clock: The time written as `updatedAt` and revocation time (tests inject one).
    public init(
        backend: any StorageBackend,
        pdfs: any BlobStore,
        logger: Logger = Logger(label: "instant.storage"),
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.backend = backend
        self.pdfs = pdfs
        self.logger = logger
        self.clock = clock
    }

    /// Adds an observer of committed changes (the server's listeners, for one).
    public func addObserver(_ observer: any StorageObserver) {
        observers.withLock { $0.append(observer) }
    }

    /// Runs one write transaction whose body also says what it changed: the events are announced
    /// to other nodes inside the transaction and reported to the observers after the commit.
    func write<T: Sendable>(
        _ body: @escaping @Sendable (any StorageTransaction) async throws -> (value: T, events: [StorageEvent])
    ) async throws -> T {
        let (value, events) = try await backend.write { transaction in
            let outcome = try await body(transaction)
            for event in outcome.events { try await transaction.announce(event) }
            return (outcome.value, outcome.events)
        }
        await report(events)
        return value
    }

    /// Tells the observers what a committed transaction changed: the records its commits wrote,
    /// then its events; then, for a group transaction, how the `group` went.
    func report(_ events: [StorageEvent], changes: [LayerChangeSet] = [], group: GroupCommitReport? = nil) async {
        guard !events.isEmpty || group != nil else { return }
        for observer in observers.withLock({ $0 }) {
            if !changes.isEmpty { await observer.recordsCommitted(changes) }
            if !events.isEmpty { await observer.storageCommitted(events) }
            if let group { observer.groupCommitted(group) }
        }
    }

    // MARK: Looking things up inside a transaction

    /// The document, or ``StorageError/Code/documentNotFound``.
    static func requireDocument(_ transaction: any StorageTransaction, _ documentID: String) async throws
        -> StoredDocument
    {
        guard let document = try await transaction.document(id: documentID) else { throw documentNotFound(documentID) }
        return document
    }

    /// The error for a document that does not exist.
    static func documentNotFound(_ documentID: String) -> StorageError {
        StorageError(.documentNotFound, "No document has the id '\(documentID)'. Upload it first.")
    }

    /// The layer (locked with `forUpdate`), or ``StorageError/Code/documentNotFound`` /
    /// ``StorageError/Code/layerNotFound``.
    static func requireLayer(
        _ transaction: any StorageTransaction,
        documentID: String,
        name: String,
        forUpdate: Bool = false
    ) async throws -> StoredLayer {
        if let layer = try await transaction.layer(documentID: documentID, name: name, forUpdate: forUpdate) {
            return layer
        }
        throw try await missingLayer(transaction, documentID: documentID, name: name)
    }

    /// Why a layer was not found: its document is missing (thrown), or the layer is (returned).
    static func missingLayer(_ transaction: any StorageTransaction, documentID: String, name: String) async throws
        -> StorageError
    {
        _ = try await requireDocument(transaction, documentID)
        return StorageError(
            .layerNotFound,
            "The document '\(documentID)' has no layer named '\(name)'. Create it with POST /api/documents/\(documentID)/layers."
        )
    }
}
