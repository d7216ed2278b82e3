import Foundation
import InstantJSON

/// How ``PDFDocument/writing(_:attachments:options:)`` writes records into a PDF.
public struct PDFExportOptions: Hashable, Sendable {
    /// Draw the annotations into the page content and remove them, so that they can no longer be
    /// edited (form fields stay interactive; comments are left out).
    public var flatten: Bool
    /// Write annotations at all; `false` gives the PDF without annotations (form fields and their
    /// values stay).
    public var includeAnnotations: Bool
    /// Write comments as replies to their thread's root annotation.
    public var includeComments: Bool

    public init(flatten: Bool = false, includeAnnotations: Bool = true, includeComments: Bool = true) {
        self.flatten = flatten
        self.includeAnnotations = includeAnnotations
        self.includeComments = includeComments
    }
}

extension PDFDocument {
    /// The PDF with `records` written into it as an incremental update: the original bytes,
    /// followed by only the objects that differ from the PDF's originals.
    ///
    /// `records` is the complete state: annotations, comments and form field values as in
    /// ``originalRecords()``. An original (matched by `pdfObjectId`) that is missing from `records`
    /// is deleted, one that differs is written again under its object number, and records without
    /// a `pdfObjectId` become new annotations with an appearance stream, so that every viewer shows
    /// them. Encrypted files stay encrypted with their own security handler.
    ///
    /// - Parameter attachments: the bytes of image attachments by attachment id (JPEG or PNG).
    /// - Throws: ``PDFError`` with code ``PDFError/Code/unwritableRecord`` when a record cannot be
    ///   placed, such as an annotation on a page the PDF does not have.
    public func writing(
        _ records: InstantDocumentJSON, attachments: [String: Data] = [:], options: PDFExportOptions = .init()
    ) throws(PDFError) -> Data {
        var data = Data(reader.bytes)
        data.append(contentsOf: try incrementalUpdate(records, attachments: attachments, options: options))
        return data
    }

    /// Only the bytes that ``writing(_:attachments:options:)`` appends to the original file, for
    /// callers that append them to a file of their own without copying it.
    public func incrementalUpdate(
        _ records: InstantDocumentJSON, attachments: [String: Data] = [:], options: PDFExportOptions = .init()
    ) throws(PDFError) -> Data {
        var writer = PDFWriter(document: self, options: options, attachments: attachments)
        return Data(try writer.write(records))
    }
}
