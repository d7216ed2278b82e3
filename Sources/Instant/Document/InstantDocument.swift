import Foundation
import InstantJSON

/// The records of one layer as an app reads and edits them: annotations (and, through Instant
/// JSON, comments, form values and bookmarks).
///
/// A descriptor has one editable document and any number of read-only ones; all show the same
/// local data, updated as edits are made and server changes arrive. Every edit is committed to
/// the local store before the call returns and syncs later. A document becomes invalid when its
/// download fails or is cancelled or its local data is removed.
public final class InstantDocument: @unchecked Sendable {
    /// Whether the document accepts edits.
    public let isEditable: Bool
    private weak var descriptor: InstantDocumentDescriptor?
    private let lock = NSLock()
    private var invalidated = false
    private var observers: [UUID: @Sendable (Set<String>?) -> Void] = [:]
    private let changeBroadcast = Broadcast<InstantDocumentChange>()

    init(descriptor: InstantDocumentDescriptor, isEditable: Bool) {
        self.descriptor = descriptor
        self.isEditable = isEditable
    }

    /// Whether the document can still be used.
    public var isValid: Bool { lock.withLock { !invalidated } && descriptor != nil }

    // MARK: Reading

    /// Every annotation of the layer, ordered by identifier.
    /// - Throws: ``InstantError/Code/notDownloaded`` until the download finished.
    public func annotations() throws -> [Annotation] {
        try records(of: Annotation.self)
    }

    /// The annotations of one page (0-based).
    public func annotations(onPage pageIndex: Int) throws -> [Annotation] {
        try annotations().filter { $0.pageIndex == pageIndex }
    }

    /// The stable identifier of an annotation of this document: URL-, XML- and file-name-safe.
    /// `nil` for an annotation that was never added.
    public func identifier(for annotation: Annotation) -> String? {
        annotation.id
    }

    /// The annotation with an identifier from ``identifier(for:)``, or `nil`.
    public func annotation(withIdentifier identifier: String) throws -> Annotation? {
        try record(of: Annotation.self, withIdentifier: identifier)
    }

    /// The layer's records of one type, ordered by identifier.
    func records<Record: DocumentRecord>(of type: Record.Type) throws -> [Record] {
        let (descriptor, _) = try ready()
        return try descriptor.store.records(
            documentID: descriptor.identifier, layer: descriptor.layerName, kind: Record.kind
        ).map(Record.init(stored:))
    }

    /// The record of one type with the given record id, or `nil`.
    func record<Record: DocumentRecord>(of type: Record.Type, withIdentifier identifier: String) throws -> Record? {
        let (descriptor, _) = try ready()
        guard
            let record = try descriptor.store.record(
                documentID: descriptor.identifier, layer: descriptor.layerName, id: identifier),
            record.kind == Record.kind
        else { return nil }
        return Record(stored: record)
    }

    // MARK: Editing

    /// Adds an annotation; it gets a new identifier (a ULID) unless it has one.
    /// - Returns: The annotation as stored, with its identifier: update or remove that value.
    /// - Throws: ``InstantError/Code/invalidRecord`` for an annotation that is not valid Instant
    ///   JSON or whose page is not a page of the document.
    @discardableResult
    public func add(_ annotation: Annotation) throws -> Annotation {
        try checkPage(annotation.pageIndex, of: Annotation.noun)
        return try addRecord(annotation)
    }

    /// Replaces an annotation added before (matched by identifier) with this version.
    /// - Throws: ``InstantError/Code/annotationNotFound`` if there is no annotation with its
    ///   identifier.
    public func update(_ annotation: Annotation) throws {
        try updateRecord(annotation)
    }

    /// Removes an annotation.
    /// - Throws: ``InstantError/Code/annotationNotFound`` if there is no annotation with its
    ///   identifier.
    public func remove(_ annotation: Annotation) throws {
        try removeRecord(annotation)
    }

    /// Refuses a page the document's PDF does not have.
    func checkPage(_ pageIndex: Int, of noun: String) throws {
        let (descriptor, _) = try ready()
        if let pageCount = descriptor.pageCount, pageIndex >= pageCount {
            throw InstantError(
                .invalidRecord,
                "The \(noun)'s pageIndex \(pageIndex) is past the document's last page "
                    + "(it has \(pageCount) page\(pageCount == 1 ? "" : "s"), numbered from 0)."
            )
        }
    }

    /// Adds a record, checked against its type's rules; it gets a new identifier unless it has
    /// one (or its identifier is fixed by its content).
    func addRecord<Record: DocumentRecord>(_ record: Record) throws -> Record {
        var stored = record
        stored.assignNewRecordID()
        try commit([.put(stored, isNew: true)])
        return stored
    }

    /// Replaces a record the document has with this version.
    func updateRecord<Record: DocumentRecord>(_ record: Record) throws {
        _ = try existingID(of: record)
        try commit([.put(record, isNew: false)])
    }

    /// Removes a record the document has.
    func removeRecord<Record: DocumentRecord>(_ record: Record) throws {
        try commit([.delete(id: try existingID(of: record))])
    }

    /// The identifier of a record this document has.
    private func existingID<Record: DocumentRecord>(of record: Record) throws -> String {
        guard let id = record.recordID else {
            throw InstantError(
                Record.notFoundCode,
                "The \(Record.noun) has no identifier: update or remove the value add() returned, or one read "
                    + "from the document.")
        }
        guard try self.record(of: Record.self, withIdentifier: id) != nil else {
            throw InstantError(Record.notFoundCode, "No \(Record.noun) of this document has the identifier '\(id)'.")
        }
        return id
    }

    /// What an edit does before it reaches the store.
    enum Edit {
        /// Create (`isNew`) or replace a record of the document's API, checked against its rules.
        case put(any DocumentRecord, isNew: Bool)
        /// Create or replace a record from Instant JSON (checked by the caller).
        case putRecord(id: String, kind: String, content: JSONValue)
        case delete(id: String)
    }

    func commit(_ edits: [Edit]) throws {
        let (descriptor, layer) = try ready()
        guard isEditable else {
            throw InstantError(.readOnlyDocument, "This document is read-only; edit the descriptor's editableDocument.")
        }
        let newRecordGroup = layer.groupOverride
        var change = InstantDocumentChange(origin: .localEdit)
        let localEdits: [LocalEdit] = try edits.map { edit throws -> LocalEdit in
            switch edit {
            case .put(let record, let isNew):
                let value = record.jsonValue
                let type = type(of: record)
                if let problem = type.validationErrors(of: value, at: type.kind).first {
                    throw InstantError(.invalidRecord, "The \(type.noun) is not valid Instant JSON: \(problem)")
                }
                let id = record.recordID ?? ""
                let existingGroup =
                    isNew
                    ? nil
                    : try descriptor.store.record(
                        documentID: descriptor.identifier, layer: descriptor.layerName, id: id)?.group
                if isNew { change.added.insert(id) } else { change.updated.insert(id) }
                return .put(
                    id: id, kind: type.kind, content: value,
                    group: isNew ? newRecordGroup : existingGroup.map { .assigned($0) } ?? .unchanged)
            case .putRecord(let id, let kind, let content):
                let existing = try descriptor.store.record(
                    documentID: descriptor.identifier, layer: descriptor.layerName, id: id)
                if existing == nil { change.added.insert(id) } else { change.updated.insert(id) }
                let group =
                    existing.map { record in record.group.map { .assigned($0) } ?? .unchanged } ?? newRecordGroup
                return .put(id: id, kind: kind, content: content, group: group)
            case .delete(let id):
                change.removed.insert(id)
                return .delete(id: id)
            }
        }
        try descriptor.store.commit(localEdits, documentID: descriptor.identifier, layer: descriptor.layerName)
        for document in descriptor.documents { document.notifyChanges(change) }
        descriptor.deliver(.localChangeCommitted)
    }

    // MARK: Observing

    /// Calls `handler` (off the main thread) whenever records change, locally or from the server,
    /// with the identifiers that changed (`nil` when everything may have: a download or reset).
    /// - Returns: A token; the observation lasts until you pass it to ``removeObserver(_:)``.
    public func observeChanges(_ handler: @escaping @Sendable (Set<String>?) -> Void) -> UUID {
        let token = UUID()
        lock.withLock { observers[token] = handler }
        return token
    }

    /// Ends an observation.
    public func removeObserver(_ token: UUID) {
        lock.withLock { observers[token] = nil }
    }

    /// The changes of the document's records from now on, from local edits and from the server,
    /// in the order they were committed to the local store.
    ///
    /// The sequence ends when the document becomes invalid (its descriptor was invalidated, its
    /// download failed or its local data was removed) or is deallocated: keep a reference to the
    /// document while you iterate. Changes are kept until the consumer takes
    /// them (the buffer is unbounded); stop iterating (or cancel the iterating task) to end it.
    ///
    /// ```swift
    /// for await change in document.changes where !change.isEmpty {
    ///     for id in change.added { if let added = try document.annotation(withIdentifier: id) { show(added) } }
    ///     for id in change.removed { hide(id) }
    /// }
    /// ```
    public var changes: AsyncStream<InstantDocumentChange> {
        changeBroadcast.stream()
    }

    func notifyChanges(_ change: InstantDocumentChange) {
        guard !change.isEmpty else { return }
        let handlers = lock.withLock { Array(observers.values) }
        let ids = change.isReload ? nil : change.identifiers
        for handler in handlers { handler(ids) }
        changeBroadcast.yield(change)
    }

    func invalidate() {
        lock.withLock { invalidated = true }
        changeBroadcast.finish()
    }

    /// The descriptor and its layer, if the document can be used.
    func ready() throws(InstantError) -> (InstantDocumentDescriptor, LocalLayer) {
        guard let descriptor, lock.withLock({ !invalidated }) else {
            throw InstantError(
                .documentInvalidated, "The document is no longer valid (its download failed or its data was removed).")
        }
        return (descriptor, try descriptor.downloadedLayer())
    }
}

extension InstantError.Code {
    /// An edit was made on a read-only document.
    public static let readOnlyDocument = InstantError.Code(rawValue: "readOnlyDocument")
    /// A record given to the SDK is not valid Instant JSON.
    public static let invalidRecord = InstantError.Code(rawValue: "invalidRecord")
}
