/// A change of a push that the server did not apply.
public struct SyncRejection: Sendable, Hashable {
    /// Why a change was rejected, for programs.
    public struct Code: RawRepresentable, Sendable, Hashable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The token lacks `write`, or the collaboration permissions do not grant the change.
        public static let permissionDenied = Code(rawValue: "permissionDenied")
        /// The record was deleted after the client's base revision (delete wins).
        public static let recordDeleted = Code(rawValue: "recordDeleted")
        /// The record's Instant JSON is not valid.
        public static let invalidRecord = Code(rawValue: "invalidRecord")
        /// The record is larger than the server's per-record limit.
        public static let recordTooLarge = Code(rawValue: "recordTooLarge")
        /// The record references an attachment the server does not have.
        public static let missingAttachment = Code(rawValue: "missingAttachment")
        /// A record with this id exists with another kind.
        public static let kindMismatch = Code(rawValue: "kindMismatch")
    }

    /// The id of the record the change was about.
    public var id: String
    /// The kind of the record.
    public var kind: RecordKind
    /// Why, for programs.
    public var code: Code
    /// Why, for people.
    public var reason: String
}
