/// What changed in a document's records (annotations, comments, form field values, bookmarks), as
/// ``InstantDocument/changes`` reports it.
public struct InstantDocumentChange: Sendable, Hashable {
    /// Where a change came from.
    public enum Origin: Sendable, Hashable {
        /// An edit through one of the descriptor's documents.
        case localEdit
        /// The server: a sync answer, a download or a migration.
        case server
    }

    /// Where the change came from.
    public var origin: Origin
    /// The identifiers of records the document did not have before.
    public var added: Set<String>
    /// The identifiers of records whose content changed.
    public var updated: Set<String>
    /// The identifiers of records the document no longer has.
    public var removed: Set<String>
    /// Whether any record may have changed (the layer was downloaded, migrated or fetched again
    /// as a whole): read the records again. The three sets are empty then.
    public var isReload: Bool

    /// Creates a change.
    public init(
        origin: Origin, added: Set<String> = [], updated: Set<String> = [], removed: Set<String> = [],
        isReload: Bool = false
    ) {
        self.origin = origin
        self.added = added
        self.updated = updated
        self.removed = removed
        self.isReload = isReload
    }

    /// A reload from the server: every record may have changed.
    static let reload = InstantDocumentChange(origin: .server, isReload: true)

    /// Whether the change touches no record.
    public var isEmpty: Bool { !isReload && added.isEmpty && updated.isEmpty && removed.isEmpty }

    /// The identifiers of every record added, updated or removed (empty for a reload).
    public var identifiers: Set<String> { added.union(updated).union(removed) }
}
