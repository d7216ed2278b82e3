import Foundation
import InstantPDF

/// Reads an uploaded PDF: its pages, identifier, title and the records of its own annotations
/// and form values (the base records).
public protocol DocumentImporter: Sendable {
    /// Parses the PDF bytes, decoding no more than `limits` allow.
    ///
    /// Called on a worker thread of the server's ``PDFWorkPool``, never on an event loop or in
    /// Swift's cooperative thread pool: it may block for as long as the PDF takes.
    /// - Throws: ``DocumentImportError`` when the bytes are not a readable PDF or go over `limits`.
    func importDocument(_ pdf: Data, password: String?, limits: PDFLimits) throws -> ImportedDocument
}

/// What the upload learns from a PDF.
public struct ImportedDocument: Sendable {
    /// The pages of the PDF.
    public var pages: [PageInfo]
    /// The PDF's file identifier, if it has one.
    public var pdfID: DocumentPDFID?
    /// The title from the PDF's metadata, if any.
    public var title: String?
    /// Whether the PDF needs a user password to open.
    public var isPasswordProtected: Bool
    /// The PDF's own annotations, form field values and form fields as records; their ids are the
    /// stringified PDF object numbers.
    public var baseRecords: [RecordWrite]

    /// Creates an import result.
    public init(
        pages: [PageInfo],
        pdfID: DocumentPDFID?,
        title: String?,
        isPasswordProtected: Bool,
        baseRecords: [RecordWrite]
    ) {
        self.pages = pages
        self.pdfID = pdfID
        self.title = title
        self.isPasswordProtected = isPasswordProtected
        self.baseRecords = baseRecords
    }
}

/// An uploaded file that could not be read as a PDF.
public struct DocumentImportError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: RawRepresentable, Hashable, Sendable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The bytes are not a PDF or are damaged beyond repair.
        public static let malformed = Code(rawValue: "malformed")
        /// The PDF needs a password that was not given or is wrong.
        public static let passwordRequired = Code(rawValue: "passwordRequired")
        /// Reading the PDF would go over the server's ``InstantPDF/PDFLimits``; the message names the
        /// limit and the option that raises it.
        public static let limitExceeded = Code(rawValue: "limitExceeded")
    }

    /// What kind of failure this is.
    public var code: Code
    /// The parser's reason, for the uploader.
    public var message: String

    /// Creates an import error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
