import Foundation
import InstantJSON
import InstantPDF

/// Reads uploads with the InstantPDF reader: pages, `/ID`, title, and the PDF's own annotations,
/// comments, form fields and form field values as base records.
///
/// Record ids follow the format: an annotation or comment that has an object number is stored
/// under that number as a string; form fields and their values under `formField:<name>` and
/// `formFieldValue:<name>`, the ids the REST API uses for them.
public struct InstantPDFImporter: DocumentImporter {
    /// Creates the importer.
    public init() {}

    public func importDocument(_ pdf: Data, password: String?, limits: PDFLimits) throws -> ImportedDocument {
        let document: PDFDocument
        do {
            document = try PDFDocument(data: pdf, password: password, limits: limits)
        } catch {
            switch error.code {
            case .passwordRequired:
                throw DocumentImportError(.passwordRequired, error.message)
            case .limitExceeded:
                throw DocumentImportError(.limitExceeded, PDFLimitRefusal.reason(error))
            default:
                throw DocumentImportError(.malformed, "the PDF could not be read: \(error.message)")
            }
        }
        guard document.pageCount > 0 else {
            throw DocumentImportError(.malformed, "the PDF could not be read: it has no pages")
        }
        let originals = document.originalRecords()
        var records: [RecordWrite] = []
        func add(_ kind: RecordKind, id: String, pdfObjectID: Int?, _ content: JSONValue) {
            records.append(RecordWrite(id: id, kind: kind, pdfObjectID: pdfObjectID, content: content.serialized()))
        }
        for annotation in originals.annotations {
            add(.annotation, id: annotation.id ?? "", pdfObjectID: annotation.pdfObjectId, annotation.jsonValue)
        }
        for comment in originals.comments {
            add(.comment, id: comment.id ?? "", pdfObjectID: comment.pdfObjectId, comment.jsonValue)
        }
        for field in originals.formFields {
            add(
                .formField, id: FormField.recordID(forName: field.name), pdfObjectID: field.pdfObjectId, field.jsonValue
            )
        }
        for value in originals.formFieldValues {
            add(.formFieldValue, id: FormFieldValue.recordID(forName: value.name), pdfObjectID: nil, value.jsonValue)
        }
        // A form field listed twice under the same name would collide; the first one wins.
        var seen = Set<String>()
        records = records.filter { seen.insert($0.id).inserted }
        let imported = ImportedDocument(
            pages: document.pages.map {
                PageInfo(width: $0.cropBox.width, height: $0.cropBox.height, rotation: $0.rotation)
            },
            pdfID: document.pdfId.map { DocumentPDFID(permanent: $0.permanent, changing: $0.changing) },
            title: document.title,
            isPasswordProtected: false,
            baseRecords: records
        )
        // Objects in streams beyond the limits read as missing: refuse rather than import less.
        if let exceeded = document.exceededLimit {
            throw DocumentImportError(.limitExceeded, PDFLimitRefusal.reason(exceeded))
        }
        return imported
    }
}
