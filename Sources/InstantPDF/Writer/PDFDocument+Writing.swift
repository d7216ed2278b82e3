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
    ///   placed, such as an annotation on a page the PDF does not have, and
    ///   ``PDFError/Code/limitExceeded`` when reading the originals or decoding an image attachment
    ///   goes over the document's ``PDFDocument/limits``.
    public func writing(
        _ records: InstantDocumentJSON, attachments: [String: Data] = [:], options: PDFExportOptions = .init()
    ) throws(PDFError) -> Data {
        var data = reader.bytes.data(0..<reader.bytes.count)
        data.append(contentsOf: try incrementalUpdate(records, attachments: attachments, options: options))
        return data
    }

    /// Only the bytes that ``writing(_:attachments:options:)`` appends to the original file, for
    /// callers that append them to a file of their own without copying it.
    public func incrementalUpdate(
        _ records: InstantDocumentJSON, attachments: [String: Data] = [:], options: PDFExportOptions = .init()
    ) throws(PDFError) -> Data {
        var writer = PDFWriter(document: self, options: options, attachments: attachments)
        let update = try writer.write(records)
        // Originals in streams beyond the budget read as missing: the update would delete them.
        try reader.budget.check()
        return Data(update)
    }

    /// The PDF with an Instant JSON document applied to it, as an incremental update.
    ///
    /// The document is applied as the format defines: a record with a `pdfObjectId` replaces that
    /// original, an original in `skippedPdfObjectIds` that no record replaces is deleted, records
    /// without a `pdfObjectId` are new, form field values replace the field's value, and every
    /// other original stays as it is. The result reads the same as ``writing(_:attachments:options:)``
    /// of ``originalRecords()`` with the document applied, but with the default options only the
    /// originals the document names are read, so that a few changes to a large file cost what the
    /// changes cost. Flattening, or leaving annotations or comments out, reads every original.
    ///
    /// - Parameter attachments: image bytes by attachment id, in addition to the document's own
    ///   `attachments`.
    /// - Throws: ``PDFError`` with code ``PDFError/Code/unwritableRecord`` when a record cannot be
    ///   placed, such as an annotation on a page the PDF does not have, and
    ///   ``PDFError/Code/limitExceeded`` when reading the originals or decoding an image attachment
    ///   goes over the document's ``PDFDocument/limits``.
    public func applying(
        _ instantJSON: InstantDocumentJSON, attachments: [String: Data] = [:], options: PDFExportOptions = .init()
    ) throws(PDFError) -> Data {
        var data = reader.bytes.data(0..<reader.bytes.count)
        data.append(try incrementalUpdate(applying: instantJSON, attachments: attachments, options: options))
        return data
    }

    /// Only the bytes that ``applying(_:attachments:options:)`` appends to the original file.
    public func incrementalUpdate(
        applying instantJSON: InstantDocumentJSON, attachments: [String: Data] = [:],
        options: PDFExportOptions = .init()
    ) throws(PDFError) -> Data {
        guard options == PDFExportOptions() else {
            var records = originalRecords()
            records.apply(instantJSON)
            let images = records.attachments.mapValues(\.data).merging(attachments) { _, given in given }
            return try incrementalUpdate(records, attachments: images, options: options)
        }
        let images = instantJSON.attachments.mapValues(\.data).merging(attachments) { _, given in given }
        var writer = PDFWriter(applyingTo: self, attachments: images)
        let update = try writer.write(instantJSON)
        try reader.budget.check()
        return Data(update)
    }
}
