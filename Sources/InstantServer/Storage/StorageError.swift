/// An error from an ``InstantStorage``.
public struct StorageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The document does not exist.
        public static let documentNotFound = Code(rawValue: "documentNotFound")
        /// A document with that id already exists.
        public static let documentExists = Code(rawValue: "documentExists")
        /// The layer does not exist.
        public static let layerNotFound = Code(rawValue: "layerNotFound")
        /// A layer with that name already exists.
        public static let layerExists = Code(rawValue: "layerExists")
        /// The record does not exist (or is deleted).
        public static let recordNotFound = Code(rawValue: "recordNotFound")
        /// A live record with that id already exists.
        public static let recordExists = Code(rawValue: "recordExists")
        /// The record was deleted after the revision the change was based on.
        public static let recordDeleted = Code(rawValue: "recordDeleted")
        /// A push id jumps too far above the client's last one (see ``ClientPush/maximumStep``).
        public static let pushOutOfRange = Code(rawValue: "pushOutOfRange")
        /// The stored data could not be read back (corruption or an incompatible schema).
        public static let corrupted = Code(rawValue: "corrupted")
        /// The underlying database or file system failed.
        public static let backendFailure = Code(rawValue: "backendFailure")
    }

    /// What kind of failure this is.
    public var code: Code
    /// A message that says what went wrong and what to do.
    public var message: String

    /// Creates a storage error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }

    /// Whether the error leaves the transaction it happened in unusable (the database failed, or
    /// returned what cannot be read), rather than refusing one request before it wrote anything.
    public var failsTheTransaction: Bool {
        code == .backendFailure || code == .corrupted
    }
}
