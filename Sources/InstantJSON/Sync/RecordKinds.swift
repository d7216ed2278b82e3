/// The kinds of records the sync protocol and the server's storage name (the `kind` of a change
/// and of a record in docs/PROTOCOL.md), shared by the server and the SDK.
public enum InstantRecordKind: String, CaseIterable, Sendable {
    /// An entry of Instant JSON's `annotations`.
    case annotation
    /// An entry of `comments`.
    case comment
    /// An entry of `formFieldValues`.
    case formFieldValue
    /// An entry of `formFields`.
    case formField
    /// An entry of `bookmarks`.
    case bookmark
}

extension FormFieldValue {
    /// The record id of the value of the field named `name`: a field has one value, identified by
    /// the field (`formFieldValue:NAME`).
    public static func recordID(forName name: String) -> String { "formFieldValue:\(name)" }
}

extension FormField {
    /// The record id of the field named `name` (`formField:NAME`): fields are identified by name.
    public static func recordID(forName name: String) -> String { "formField:\(name)" }
}
