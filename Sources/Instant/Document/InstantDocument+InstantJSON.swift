import Foundation
import InstantJSON
import InstantPDF

extension InstantDocument {
    /// The layer's records as an Instant JSON document, relative to the PDF: the records that
    /// differ from the PDF's own annotations, comments and form values, and in
    /// `skippedPdfObjectIds` the PDF's originals that the layer deleted.
    /// - Throws: ``InstantError/Code/notDownloaded`` before the download finished.
    public func generateInstantJSON() throws -> Data {
        let (descriptor, _) = try ready()
        let records = try descriptor.store.records(documentID: descriptor.identifier, layer: descriptor.layerName)
        let originals = try originalRecords(of: descriptor)
        let originalByID = originals.map(Self.recordsByID) ?? [:]
        let changed = records.filter { originalByID[$0.id] != $0.content }
        let ids = Set(records.map(\.id))
        var document = InstantDocumentJSON(
            pdfId: originals?.pdfId,
            annotations: Self.records(of: Annotation.self, in: changed),
            bookmarks: Self.records(of: Bookmark.self, in: changed),
            formFieldValues: Self.records(of: FormFieldValue.self, in: changed),
            comments: Self.records(of: Comment.self, in: changed)
        )
        document.skippedPdfObjectIds = (originals?.annotations ?? []).compactMap { original in
            guard let id = original.id, !ids.contains(id) else { return nil }
            return original.pdfObjectId
        }.sorted()
        return document.serialized()
    }

    /// Applies an Instant JSON document to the layer in one local transaction: its annotations,
    /// comments, form field values and bookmarks are created or replaced (by `id`, else by
    /// `pdfObjectId`), and the PDF originals listed in `skippedPdfObjectIds` are deleted.
    /// - Parameter lenient: Skip invalid records instead of refusing the whole document.
    /// - Throws: ``InstantError/Code/invalidRecord`` naming the first bad path (and nothing is
    ///   written), ``InstantError/Code/readOnlyDocument`` for a read-only document.
    public func applyInstantJSON(_ data: Data, lenient: Bool = false) throws {
        let decoded: InstantDocumentJSON
        do {
            decoded = try InstantDocumentJSON.decode(data, mode: lenient ? .lenient : .strict).document
        } catch {
            throw InstantError(.invalidRecord, "The Instant JSON cannot be applied: \(error)")
        }
        func id(_ explicit: String?, _ objectID: Int?) -> String {
            explicit ?? objectID.map(String.init) ?? ULIDGenerator.shared.next().description
        }
        var edits: [Edit] = []
        for annotation in decoded.annotations {
            var record = annotation
            record.id = id(annotation.id, annotation.pdfObjectId)
            edits.append(.putRecord(id: record.id ?? "", kind: Annotation.kind, content: record.jsonValue))
        }
        for comment in decoded.comments {
            let commentID = id(comment.id, comment.pdfObjectId)
            var content = comment.json
            content["id"] = .string(commentID)
            edits.append(.putRecord(id: commentID, kind: Comment.kind, content: .object(content)))
        }
        for value in decoded.formFieldValues {
            edits.append(
                .putRecord(
                    id: FormFieldValue.recordID(forName: value.name), kind: FormFieldValue.kind,
                    content: value.jsonValue))
        }
        for bookmark in decoded.bookmarks {
            let bookmarkID = bookmark.json["id"]?.stringValue ?? ULIDGenerator.shared.next().description
            var content = bookmark.json
            content["id"] = .string(bookmarkID)
            edits.append(.putRecord(id: bookmarkID, kind: Bookmark.kind, content: .object(content)))
        }
        edits += decoded.skippedPdfObjectIds.map { .delete(id: String($0)) }
        try commit(edits)
    }

    /// An annotation from its Instant JSON object, checked against the format.
    /// - Throws: ``InstantError/Code/invalidRecord`` naming the bad path.
    public static func annotation(fromInstantJSON data: Data) throws -> Annotation {
        do {
            return try Annotation(parsing: data)
        } catch {
            throw InstantError(.invalidRecord, "Not an Instant JSON annotation: \(error)")
        }
    }

    /// An annotation's Instant JSON object (compact, keys sorted).
    public static func instantJSON(for annotation: Annotation) -> Data {
        annotation.serialized()
    }

    /// The records of the local PDF, or `nil` if it cannot be read.
    private func originalRecords(of descriptor: InstantDocumentDescriptor) throws -> InstantDocumentJSON? {
        let url = descriptor.store.pdfURL(documentID: descriptor.identifier)
        guard let data = try? Data(contentsOf: url), let pdf = try? PDFDocument(data: data) else { return nil }
        return pdf.originalRecords()
    }

    private static func recordsByID(_ document: InstantDocumentJSON) -> [String: JSONValue] {
        var byID: [String: JSONValue] = [:]
        for annotation in document.annotations { if let id = annotation.id { byID[id] = annotation.jsonValue } }
        for comment in document.comments { if let id = comment.id { byID[id] = comment.jsonValue } }
        for value in document.formFieldValues { byID[FormFieldValue.recordID(forName: value.name)] = value.jsonValue }
        return byID
    }

    /// The records of one type among `records`.
    private static func records<Record: DocumentRecord>(of type: Record.Type, in records: [LocalRecord]) -> [Record] {
        records.filter { $0.kind == Record.kind }.map(Record.init(stored:))
    }
}
