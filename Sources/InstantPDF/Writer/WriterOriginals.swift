import Foundation
import InstantJSON

/// The PDF's original records as the writer consults them.
///
/// For a complete state every original is read up front, because every one of them is compared
/// with the records (and deleted when missing). For an Instant JSON document applied to the PDF,
/// only the originals it names are read, one at a time, so that the cost follows the size of the
/// changes and not the number of annotations already in the file.
struct WriterOriginals {
    typealias DirectOriginal = (annotation: Annotation, entry: PDFObject)

    private let document: PDFDocument
    /// Whether every original was read up front.
    let isComplete: Bool
    private var annotations: [Int: Annotation?] = [:]
    private var comments: [Int: Comment?] = [:]
    /// Originals written directly into a page's `/Annots` (no object number), by their positional
    /// id `p<page>a<position>`, with the dictionary that identifies them in the array.
    private var directOriginals: [String: DirectOriginal?] = [:]
    private var form: (fields: [FormField], values: [FormFieldValue])?
    private var placements: [Int: (pageIndex: Int, reference: PDFReference)]?

    /// Every original of `document`, read now.
    init(everyOriginalOf document: PDFDocument) {
        self.document = document
        isComplete = true
        let records = document.originalRecords()
        for annotation in records.annotations {
            if let number = annotation.pdfObjectId {
                if annotations[number] == nil { annotations[number] = annotation }
            } else if let id = annotation.id {
                directOriginals[id] = Self.directEntry(id, in: document).map { (annotation, $0.entry) }
            }
        }
        for comment in records.comments {
            if let number = comment.pdfObjectId, comments[number] == nil { comments[number] = comment }
        }
        form = (records.formFields, records.formFieldValues)
    }

    /// The originals of `document`, read when they are asked for.
    init(readingOnDemand document: PDFDocument) {
        self.document = document
        isComplete = false
    }

    /// The original annotation with object number `number`, if there is one.
    mutating func annotation(_ number: Int) -> Annotation? {
        if let known = annotations[number] { return known }
        guard !isComplete else { return nil }
        readRecord(number)
        return annotations[number] ?? nil
    }

    /// The original comment (a reply) with object number `number`, if there is one.
    mutating func comment(_ number: Int) -> Comment? {
        if let known = comments[number] { return known }
        guard !isComplete else { return nil }
        readRecord(number)
        return comments[number] ?? nil
    }

    /// The original without an object number that has the positional id `id`, if there is one.
    mutating func directOriginal(_ id: String) -> DirectOriginal? {
        if let known = directOriginals[id] { return known }
        guard !isComplete else { return nil }
        let found = Self.directOriginal(id, in: document)
        directOriginals[id] = found
        return found
    }

    /// The form fields and their values as the PDF has them.
    mutating func formRecords() -> (fields: [FormField], values: [FormFieldValue]) {
        if let form { return form }
        let read = document.formRecords()
        form = read
        return read
    }

    /// Every original annotation (with an object number) and comment, for a complete state.
    func everyOriginal() -> (annotations: [Int: Annotation], comments: [Int: Comment]) {
        precondition(isComplete, "only a complete reading knows every original")
        return (annotations.compactMapValues { $0 }, comments.compactMapValues { $0 })
    }

    /// Every original without an object number, for a complete state.
    func everyDirectOriginal() -> [String: DirectOriginal] {
        precondition(isComplete, "only a complete reading knows every original")
        return directOriginals.compactMapValues { $0 }
    }

    private mutating func readRecord(_ number: Int) {
        if placements == nil { placements = document.annotationPlacements() }
        let record = document.originalRecord(number, placements: placements ?? [:])
        annotations[number] = .some(record.annotation)
        comments[number] = .some(record.comment)
    }

    /// Reads the original at a positional id `p<page>a<position>`: the dictionary written directly
    /// at that position of the page's `/Annots`.
    private static func directOriginal(_ id: String, in document: PDFDocument) -> DirectOriginal? {
        guard let (page, entry, dictionary) = directEntry(id, in: document),
            var annotation = document.annotation(
                dictionary, number: 0, page: page, space: PageSpace(cropBox: page.cropBox))
        else { return nil }
        annotation.pdfObjectId = nil
        annotation.id = id
        return (annotation, entry)
    }

    /// The entry of a page's `/Annots` that a positional id `p<page>a<position>` names, when it is
    /// a dictionary written directly into the array.
    private static func directEntry(
        _ id: String, in document: PDFDocument
    ) -> (page: PDFPage, entry: PDFObject, dictionary: PDFDictionary)? {
        guard id.hasPrefix("p"), let separator = id.firstIndex(of: "a"),
            let pageIndex = Int(id[id.index(after: id.startIndex)..<separator]),
            let position = Int(id[id.index(after: separator)...]),
            document.pages.indices.contains(pageIndex)
        else { return nil }
        let page = document.pages[pageIndex]
        guard let pageReference = page.reference,
            let list = document.resolve(document.resolve(.reference(pageReference)).dictionaryValue?["Annots"] ?? .null)
                .arrayValue,
            list.indices.contains(position), case .dictionary(let dictionary) = list[position]
        else { return nil }
        return (page, list[position], dictionary)
    }
}
