import Foundation
import InstantJSON
import InstantTesting
import Testing

@testable import InstantPDF

/// `PDFDocument.applying(_:)`: an Instant JSON document (changes relative to the PDF) written
/// into the PDF without reading the originals it does not name.
@Suite("Instant JSON applied to a PDF", .heavyWork)
struct PDFApplyTests {
    /// Changes of every kind to a file's originals: every third annotation changed, every third
    /// deleted, two new annotations and a comment on an original that stays.
    static func changes(to document: PDFDocument) -> InstantDocumentJSON {
        let originals = document.originalRecords()
        var changes = InstantDocumentJSON()
        let editable = originals.annotations.filter {
            $0.pdfObjectId != nil && $0.type != .widget && $0.type != .unknown
        }
        for (index, original) in editable.enumerated() {
            guard let number = original.pdfObjectId else { continue }
            switch index % 3 {
            case 0:
                var changed = original
                changed.opacity = 0.5
                changed.note = "changed by the test"
                changes.annotations.append(changed)
                changes.skippedPdfObjectIds.append(number)
            case 1:
                changes.skippedPdfObjectIds.append(number)
            default:
                if changes.comments.isEmpty, let id = original.id {
                    changes.comments.append(
                        Comment(
                            rootId: id, pageIndex: original.pageIndex, text: AnnotationText(value: "a reply"),
                            id: "comment-1"))
                }
            }
        }
        var note = Annotation(
            type: .note, pageIndex: 0, bbox: Rect(left: 20, top: 20, width: 24, height: 24), id: "new-note")
        note.text = AnnotationText(value: "new")
        var square = Annotation(
            type: .rectangle, pageIndex: document.pageCount - 1, bbox: Rect(left: 40, top: 50, width: 60, height: 30),
            id: "new-square")
        square.strokeColor = RGBColor(red: 255, green: 0, blue: 0)
        square.strokeWidth = 2
        changes.annotations += [note, square]
        return changes
    }

    /// What a test compares of a file's records: annotations without ids, comments' texts.
    static func comparable(_ records: InstantDocumentJSON) -> (annotations: [String], comments: [String]) {
        (
            records.annotations.map(CorpusRewrite.comparable).sorted(),
            records.comments.map { $0.text?.value ?? "" }.sorted()
        )
    }

    /// Applying changes reads back exactly as writing the complete state with the changes applied,
    /// on every annotated file of the corpus.
    @Test(.corpus) func applyingChangesEqualsWritingTheCompleteState() throws {
        var problems: [String] = []
        var compared = 0
        for entry in CorpusRewrite.annotatedEntries {
            guard let document = try? PDFDocument(data: Corpus.data(entry)), document.pageCount > 0 else { continue }
            let changes = Self.changes(to: document)
            var complete = document.originalRecords()
            complete.apply(changes)
            do {
                let applied = try PDFDocument(data: document.applying(changes)).originalRecords()
                let written = try PDFDocument(
                    data: document.writing(complete, attachments: complete.attachments.mapValues(\.data))
                ).originalRecords()
                let (appliedAnnotations, appliedComments) = Self.comparable(applied)
                let (writtenAnnotations, writtenComments) = Self.comparable(written)
                if appliedAnnotations != writtenAnnotations {
                    let missing = Set(writtenAnnotations).subtracting(appliedAnnotations).sorted().prefix(2)
                    let extra = Set(appliedAnnotations).subtracting(writtenAnnotations).sorted().prefix(2)
                    problems.append("\(entry.path): expected \(missing), applied \(extra)")
                }
                if appliedComments != writtenComments {
                    problems.append("\(entry.path): comments \(appliedComments), expected \(writtenComments)")
                }
                if applied.formFieldValues != written.formFieldValues {
                    problems.append("\(entry.path): form values differ")
                }
            } catch {
                problems.append("\(entry.path): \(error)")
            }
            compared += 1
        }
        #expect(problems.isEmpty, "\(problems.count) problems:\n\(problems.joined(separator: "\n"))")
        #expect(compared > 60)
    }

    @Test func noChangesLeaveTheFileAsItIs() throws {
        let data = WriterFixtures.plainPDF
        let document = try PDFDocument(data: data)
        #expect(try document.applying(InstantDocumentJSON()) == data)
    }

    @Test func aSkippedOriginalIsDeletedAndAReplacedOneChangedInPlace() throws {
        let document = try PDFDocument(data: TestPDF.annotated())
        let originals = document.originalRecords().annotations
        let ink = try #require(originals.first { $0.type == .ink })
        let note = try #require(originals.first { $0.type == .note })
        var changed = ink
        changed.note = "now with a note"
        let changes = InstantDocumentJSON(
            annotations: [changed],
            skippedPdfObjectIds: [try #require(ink.pdfObjectId), try #require(note.pdfObjectId)])
        let update = try document.incrementalUpdate(applying: changes)
        let records = try PDFDocument(data: document.applying(changes)).originalRecords().annotations
        #expect(records.count == originals.count - 1)
        #expect(records.first { $0.pdfObjectId == ink.pdfObjectId }?.note == "now with a note")
        #expect(!records.contains { $0.pdfObjectId == note.pdfObjectId })
        #expect(String(decoding: update, as: UTF8.self).contains("/Prev"))
    }

    @Test func anOriginalWithoutAnObjectNumberIsChangedByItsPositionalID() throws {
        let document = try PDFDocument(data: TestPDF.annotated())
        let originals = document.originalRecords().annotations
        var highlight = try #require(originals.first { $0.id == "p0a2" })
        #expect(highlight.type == .highlight && highlight.pdfObjectId == nil)
        highlight.note = "changed"
        let read = try PDFDocument(data: document.applying(InstantDocumentJSON(annotations: [highlight])))
            .originalRecords().annotations
        #expect(read.count == originals.count)
        #expect(read.filter { $0.note == "changed" }.map(\.type) == [.highlight])
        #expect(read.filter { $0.type == .ink }.map(\.note) == ["Hello world!"])
    }

    @Test func aCommentOnAnOriginalThatStaysBecomesAReply() throws {
        let document = try PDFDocument(data: TestPDF.annotated())
        let root = try #require(document.originalRecords().annotations.first { $0.pdfObjectId != nil })
        let comment = Comment(
            rootId: try #require(root.id), pageIndex: root.pageIndex, text: AnnotationText(value: "I agree"),
            id: "c1")
        let read = try PDFDocument(data: document.applying(InstantDocumentJSON(comments: [comment])))
            .originalRecords()
        #expect(read.comments.map(\.rootId) == [root.id])
        #expect(read.comments.first?.text?.value == "I agree")
        #expect(read.annotations.first { $0.pdfObjectId == root.pdfObjectId }?.isCommentThreadRoot == true)
    }

    @Test func flatteningAppliesTheChangesToEveryOriginal() throws {
        let document = try PDFDocument(data: TestPDF.annotated())
        var note = Annotation(type: .note, pageIndex: 0, bbox: Rect(left: 10, top: 10, width: 20, height: 20))
        note.text = AnnotationText(value: "flat")
        let flattened = try PDFDocument(
            data: document.applying(InstantDocumentJSON(annotations: [note]), options: PDFExportOptions(flatten: true)))
        #expect(flattened.annotations().filter { $0.type != .widget && $0.type != .link }.isEmpty)
    }

    @Test func anAnnotationOnAMissingPageIsRefused() throws {
        let document = try PDFDocument(data: WriterFixtures.plainPDF)
        let note = Annotation(type: .note, pageIndex: 7, bbox: Rect(left: 10, top: 10, width: 20, height: 20))
        #expect {
            try document.applying(InstantDocumentJSON(annotations: [note]))
        } throws: { error in
            (error as? PDFError)?.code == .unwritableRecord
        }
    }
}
