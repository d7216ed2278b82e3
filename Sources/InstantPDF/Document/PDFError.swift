/// Why a PDF could not be read.
public struct PDFError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of problem. New codes may be added; switch over them with a `default` case.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The bytes are not a PDF (no `%PDF-` header and no objects).
        public static let notAPDF = Code(rawValue: "notAPDF")
        /// The file is damaged beyond what recovery can rebuild.
        public static let damaged = Code(rawValue: "damaged")
        /// The syntax of an object is broken.
        public static let syntax = Code(rawValue: "syntax")
        /// A stream uses a filter this reader does not decode.
        public static let unsupportedFilter = Code(rawValue: "unsupportedFilter")
        /// The file is encrypted and cannot be opened without its password.
        public static let passwordRequired = Code(rawValue: "passwordRequired")
        /// The file is encrypted with a security handler this reader does not support.
        public static let unsupportedEncryption = Code(rawValue: "unsupportedEncryption")
        /// A record cannot be written into this PDF (for example, it is on a page the PDF does not have).
        public static let unwritableRecord = Code(rawValue: "unwritableRecord")
        /// Reading or writing the PDF would go over one of its ``PDFLimits`` (see ``PDFError/limit``).
        public static let limitExceeded = Code(rawValue: "limitExceeded")
        /// A page index is outside the document.
        public static let noSuchPage = Code(rawValue: "noSuchPage")
    }

    public var code: Code
    /// What went wrong and, where it helps, what to do.
    public var message: String
    /// The limit that was exceeded, for errors with code ``Code/limitExceeded``.
    public var limit: PDFLimit?

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// An error with code ``Code/limitExceeded`` for `limit`.
    public init(exceeding limit: PDFLimit, _ message: String) {
        self.init(.limitExceeded, message)
        self.limit = limit
    }

    public var description: String { "\(code): \(message)" }
}
