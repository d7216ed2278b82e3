import Foundation

/// One record of a layer as stored: its Instant JSON object plus the metadata the server keeps.
///
/// A deleted record stays in storage as a tombstone (``isDeleted`` is `true`, ``content`` is
/// empty) so that "what changed since revision N" includes deletions.
public struct StoredRecord: Sendable, Hashable {
    /// The record id: a ULID for new records, the stringified ``pdfObjectID`` for records from the PDF.
    public var id: String
    /// What the record is.
    public var kind: RecordKind
    /// The layer revision at which the record was last written or deleted.
    public var revision: Int64
    /// Whether the record is a tombstone.
    public var isDeleted: Bool
    /// The permission group of the record, if any.
    public var group: String?
    /// The user who created the record, if known.
    public var createdBy: String?
    /// The user who last changed the record, if known.
    public var updatedBy: String?
    /// The object number of the PDF object the record came from, for base records and their edits.
    public var pdfObjectID: Int?
    /// The record's Instant JSON object, UTF-8 encoded. Empty for tombstones.
    public var content: Data
    /// When the record was last written.
    public var updatedAt: Date

    /// Creates a stored record value.
    public init(
        id: String,
        kind: RecordKind,
        revision: Int64,
        isDeleted: Bool = false,
        group: String? = nil,
        createdBy: String? = nil,
        updatedBy: String? = nil,
        pdfObjectID: Int? = nil,
        content: Data,
        updatedAt: Date
    ) {
        self.id = id
        self.kind = kind
        self.revision = revision
        self.isDeleted = isDeleted
        self.group = group
        self.createdBy = createdBy
        self.updatedBy = updatedBy
        self.pdfObjectID = pdfObjectID
        self.content = content
        self.updatedAt = updatedAt
    }
}

/// The content and metadata of a record to write; the storage assigns revision and timestamp.
public struct RecordWrite: Sendable, Hashable {
    /// The record id.
    public var id: String
    /// What the record is.
    public var kind: RecordKind
    /// The permission group, if any.
    public var group: String?
    /// The user writing the record; becomes `updatedBy`, and `createdBy` when the record is new.
    public var user: String?
    /// The PDF object the record came from, if any.
    public var pdfObjectID: Int?
    /// The record's Instant JSON object, UTF-8 encoded.
    public var content: Data

    /// Creates a record write.
    public init(
        id: String,
        kind: RecordKind,
        group: String? = nil,
        user: String? = nil,
        pdfObjectID: Int? = nil,
        content: Data
    ) {
        self.id = id
        self.kind = kind
        self.group = group
        self.user = user
        self.pdfObjectID = pdfObjectID
        self.content = content
    }
}
