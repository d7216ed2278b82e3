import InstantJSON

/// The kind of a record stored on a layer.
///
/// The raw value is the wire and storage name; unknown values round-trip unchanged so that
/// newer kinds can be stored by older code.
public struct RecordKind: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The storage name of the kind.
    public var rawValue: String

    /// Creates a kind from its storage name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The kind of the protocol's vocabulary.
    public init(_ kind: InstantRecordKind) { self.rawValue = kind.rawValue }

    /// An annotation (`pspdfkit/...` records of the Instant JSON `annotations` array).
    public static let annotation = RecordKind(InstantRecordKind.annotation)
    /// A comment on a comment thread (Instant JSON `comments`).
    public static let comment = RecordKind(InstantRecordKind.comment)
    /// The value of a form field (Instant JSON `formFieldValues`).
    public static let formFieldValue = RecordKind(InstantRecordKind.formFieldValue)
    /// A form field definition (Instant JSON `formFields`).
    public static let formField = RecordKind(InstantRecordKind.formField)
    /// A bookmark (Instant JSON `bookmarks`).
    public static let bookmark = RecordKind(InstantRecordKind.bookmark)

    public var description: String { rawValue }
}
