import Foundation

/// One record of a layer as stored: its Instant JSON object plus the metadata the server keeps.
///
/// A deleted record stays in storage as a tombstone (``isDeleted`` is `true`, ``content`` is
/// empty) so that "what changed since revision N" includes deletions.
///
/// A record is a value, but its fields live in one shared box, copied when a copy of it is
/// changed: a record goes through many arrays and dictionaries on its way from a push to the
/// answers (the planner's, the group's, the answers' shared records, the change messages), and a
/// copy of its ten fields retained each of their strings and its content every time (the 100-change
/// throughput benchmark's profile, docs/BENCHMARKS.md).
public struct StoredRecord: Sendable, Hashable {
    private var box: Box

    /// The record id: a ULID for new records, the stringified ``pdfObjectID`` for records from the PDF.
    public var id: String {
        get { box.fields.id }
        set { unique().fields.id = newValue }
    }
    /// What the record is.
    public var kind: RecordKind {
        get { box.fields.kind }
        set { unique().fields.kind = newValue }
    }
    /// The layer revision at which the record was last written or deleted.
    public var revision: Int64 {
        get { box.fields.revision }
        set { unique().fields.revision = newValue }
    }
    /// Whether the record is a tombstone.
    public var isDeleted: Bool {
        get { box.fields.isDeleted }
        set { unique().fields.isDeleted = newValue }
    }
    /// The permission group of the record, if any.
    public var group: String? {
        get { box.fields.group }
        set { unique().fields.group = newValue }
    }
    /// The user who created the record, if known.
    public var createdBy: String? {
        get { box.fields.createdBy }
        set { unique().fields.createdBy = newValue }
    }
    /// The user who last changed the record, if known.
    public var updatedBy: String? {
        get { box.fields.updatedBy }
        set { unique().fields.updatedBy = newValue }
    }
    /// The object number of the PDF object the record came from, for base records and their edits.
    public var pdfObjectID: Int? {
        get { box.fields.pdfObjectID }
        set { unique().fields.pdfObjectID = newValue }
    }
    /// The record's Instant JSON object, UTF-8 encoded. Empty for tombstones.
    public var content: Data {
        get { box.fields.content }
        set { unique().fields.content = newValue }
    }
    /// When the record was last written.
    public var updatedAt: Date {
        get { box.fields.updatedAt }
        set { unique().fields.updatedAt = newValue }
    }

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
        box = Box(
            Fields(
                id: id, kind: kind, revision: revision, isDeleted: isDeleted, group: group, createdBy: createdBy,
                updatedBy: updatedBy, pdfObjectID: pdfObjectID, content: content, updatedAt: updatedAt))
    }

    /// The box of the fields, copied first if another record shares it.
    private mutating func unique() -> Box {
        if !isKnownUniquelyReferenced(&box) { box = Box(box.fields) }
        return box
    }

    public static func == (left: StoredRecord, right: StoredRecord) -> Bool {
        left.box === right.box || left.box.fields == right.box.fields
    }

    public func hash(into hasher: inout Hasher) {
        box.fields.hash(into: &hasher)
    }

    /// The box of a record's fields. A box is changed only through a record that holds the only
    /// reference to it (``unique()``), so no two threads ever see it change.
    private final class Box: @unchecked Sendable {
        /// Not checked for overlapping accesses at run time, as a class's stored property
        /// otherwise is at every access: a box is changed only by a setter of its one record,
        /// which reads nothing else of it meanwhile, while every read of a field (writing a
        /// record's JSON reads nine, and an answer writes thousands of records) would be checked.
        @exclusivity(unchecked) var fields: Fields

        init(_ fields: Fields) {
            self.fields = fields
        }
    }

    private struct Fields: Hashable {
        var id: String
        var kind: RecordKind
        var revision: Int64
        var isDeleted: Bool
        var group: String?
        var createdBy: String?
        var updatedBy: String?
        var pdfObjectID: Int?
        var content: Data
        var updatedAt: Date
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
