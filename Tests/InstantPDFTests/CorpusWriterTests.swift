import Foundation
import InstantJSON
import Testing

@testable import InstantPDF

/// Every annotated file of the corpus, with all its annotations and comments written again as new
/// objects (the originals deleted), reads back as the same Instant JSON.
enum CorpusRewrite {
    static var annotatedEntries: [Corpus.Entry] {
        Corpus.entries.filter { $0.open == "ok" && $0.encrypted == false && ($0.annots ?? 0) > 0 }
    }

    /// The file's records with every annotation except widgets and unknown subtypes (which stay as
    /// originals) turned into a new record: no `pdfObjectId`, a new id, the old id as its name.
    static func rewrittenRecords(_ document: PDFDocument) -> InstantDocumentJSON {
        var records = document.originalRecords()
        var newIDs: [String: String] = [:]
        for index in records.annotations.indices {
            let annotation = records.annotations[index]
            guard annotation.type != .widget, annotation.type != .unknown, let id = annotation.id else { continue }
            newIDs[id] = "new-\(id)"
            records.annotations[index].name = annotation.name ?? id
            records.annotations[index].id = "new-\(id)"
            records.annotations[index].pdfObjectId = nil
        }
        for index in records.comments.indices {
            let comment = records.comments[index]
            guard let root = newIDs[comment.rootId] else { continue }
            records.comments[index].json["rootId"] = .string(root)
            records.comments[index].json["id"] = .string("new-\(comment.id ?? "")")
            records.comments[index].pdfObjectId = nil
        }
        return records
    }

    /// An annotation as compared: without its ids, numbers to 1/100.
    static func comparable(_ annotation: Annotation) -> String {
        var json = annotation.json
        for key in ["id", "pdfObjectId"] { json[key] = nil }
        return String(decoding: WriterFixtures.rounded(.object(json)).serialized(), as: UTF8.self)
    }
}

@Suite("Corpus written back", .corpus, .heavyWork)
struct CorpusWriterTests {
    @Test func rewrittenAnnotationsReadBackTheSame() throws {
        var problems: [String] = []
        var rewritten = 0
        for entry in CorpusRewrite.annotatedEntries {
            guard let document = try? PDFDocument(data: Corpus.data(entry)), document.pageCount > 0 else { continue }
            let records = CorpusRewrite.rewrittenRecords(document)
            let written: Data
            do {
                written = try document.writing(records, attachments: records.attachments.mapValues(\.data))
            } catch {
                problems.append("\(entry.path): \(error)")
                continue
            }
            guard let reread = try? PDFDocument(data: written) else {
                problems.append("\(entry.path): the written file does not open")
                continue
            }
            let read = reread.originalRecords()
            let expected = records.annotations.map(CorpusRewrite.comparable).sorted()
            let actual = read.annotations.map(CorpusRewrite.comparable).sorted()
            if expected != actual {
                let missing = Set(expected).subtracting(actual).sorted().prefix(2)
                let extra = Set(actual).subtracting(expected).sorted().prefix(2)
                problems.append("\(entry.path): expected \(missing), read \(extra)")
            }
            let texts = { (comments: [InstantJSON.Comment]) in
                comments.map { "\($0.text?.value ?? "")|\($0.creatorName ?? "")" }.sorted()
            }
            if texts(records.comments) != texts(read.comments) {
                problems.append("\(entry.path): comments \(texts(records.comments)) read as \(texts(read.comments))")
            }
            rewritten += 1
        }
        #expect(problems.isEmpty, "\(problems.count) problems:\n\(problems.joined(separator: "\n"))")
        #expect(rewritten > 60)
    }

    /// Every corpus file that opens (damaged, encrypted with the empty password, without /ID, …)
    /// takes a new note, editable and flattened, and the result opens with the note in it.
    @Test func everyCorpusFileTakesANote() throws {
        var problems: [String] = []
        var written = 0
        for entry in Corpus.entries {
            guard let document = try? PDFDocument(data: Corpus.data(entry)), document.pageCount > 0 else { continue }
            var note = Annotation(type: .note, pageIndex: 0, bbox: Rect(left: 10, top: 10, width: 20, height: 20))
            note.text = AnnotationText(value: "added")
            var records = document.originalRecords()
            records.annotations.append(note)
            for flatten in [false, true] {
                do {
                    let output = try document.writing(records, options: PDFExportOptions(flatten: flatten))
                    let reread = try PDFDocument(data: output)
                    let notes = reread.annotations().filter { $0.text?.value == "added" }
                    if notes.count != (flatten ? 0 : 1) {
                        problems.append("\(entry.path): \(notes.count) notes, flatten \(flatten)")
                    }
                } catch {
                    problems.append("\(entry.path) (flatten \(flatten)): \(error)")
                }
            }
            written += 1
        }
        #expect(problems.isEmpty, "\(problems.count) problems:\n\(problems.joined(separator: "\n"))")
        #expect(written > 300)
    }
}
