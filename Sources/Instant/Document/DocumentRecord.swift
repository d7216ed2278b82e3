import InstantJSON

/// A record type that documents read, and (except form fields) edit, through their own API: its
/// kind on the wire and its id in the layer (docs/PROTOCOL.md, "Records on the wire").
protocol DocumentRecord: InstantRecord {
    /// The record kind the server and the local store file it under.
    static var kind: String { get }
    /// What the type is called in error messages.
    static var noun: String { get }
    /// The error code for a record of this type that the document does not have.
    static var notFoundCode: InstantError.Code { get }
    /// The record's id in the layer; `nil` before it has one.
    var recordID: String? { get }
    /// Gives a new record its id, if the id is not fixed by the record's content.
    mutating func assignNewRecordID()
}

extension DocumentRecord {
    static var notFoundCode: InstantError.Code { .recordNotFound }

    /// The record as stored: the app's copy of the members, with its record id as `id` where the
    /// type has one.
    init(stored record: LocalRecord) {
        self.init(uncheckedJSON: record.content.objectValue ?? [:])
    }
}

/// Records whose id is a member of their own, chosen by the client (a ULID) for new records.
protocol IdentifiedDocumentRecord: DocumentRecord {
    var id: String? { get set }
}

extension IdentifiedDocumentRecord {
    var recordID: String? { id }

    mutating func assignNewRecordID() {
        if id == nil { id = ULIDGenerator.shared.next().description }
    }
}

extension Annotation: IdentifiedDocumentRecord {
    static var kind: String { InstantRecordKind.annotation.rawValue }
    static var noun: String { "annotation" }
    static var notFoundCode: InstantError.Code { .annotationNotFound }
}

extension Comment: IdentifiedDocumentRecord {
    static var kind: String { InstantRecordKind.comment.rawValue }
    static var noun: String { "comment" }
}

extension Bookmark: IdentifiedDocumentRecord {
    static var kind: String { InstantRecordKind.bookmark.rawValue }
    static var noun: String { "bookmark" }
}

extension FormFieldValue: DocumentRecord {
    static var kind: String { InstantRecordKind.formFieldValue.rawValue }
    static var noun: String { "form field value" }
    /// One value per field: the id is the field's name (`formFieldValue:NAME`).
    var recordID: String? { Self.recordID(forName: name) }
    mutating func assignNewRecordID() {}
}

extension FormField: DocumentRecord {
    static var kind: String { InstantRecordKind.formField.rawValue }
    static var noun: String { "form field" }
    /// One record per field, named after it (`formField:NAME`).
    var recordID: String? { Self.recordID(forName: name) }
    mutating func assignNewRecordID() {}
}

extension InstantError.Code {
    /// No comment, bookmark or form field value of the document has the identifier (or name).
    public static let recordNotFound = InstantError.Code(rawValue: "recordNotFound")
}
