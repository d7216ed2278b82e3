import Foundation
import InstantJSON
import InstantPDF
import Testing

/// Records of annotated corpus files, checked field by field against the PDF source by hand.
@Suite("Golden records of annotated files")
struct GoldenRecordTests {
    func records(_ path: String) throws -> InstantDocumentJSON {
        try PDFDocument(data: Data(contentsOf: Corpus.directory.appendingPathComponent(path))).originalRecords()
    }

    /// A note, a highlight and an ink annotation written directly into /Annots by FPDF2, on an A4
    /// page (595.28 × 841.89).
    @Test func fpdfAnnotatedSample() throws {
        let document = try records("samplefiles/024-annotations/annotated_pdf.pdf")
        #expect(document.pdfId == PDFId(permanent: "YGBI5CqHEQZ2pCO2ItxWYg==", changing: "YGBI5CqHEQZ2pCO2ItxWYg=="))
        try #require(document.annotations.count == 3)
        let note = document.annotations[0]
        #expect(note.type == .note)
        #expect(note.id == "p0a0")
        #expect(note.pdfObjectId == nil)
        #expect(note.text == AnnotationText(value: "This is a text annotation."))
        // /Rect [170.08 785.20 172.91 782.36]: top = 841.89 − 785.20.
        #expect(note.bbox == Rect(left: 170.08, top: 56.69, width: 2.83, height: 2.84))
        #expect(note.icon == "comment")
        #expect(note.flags == nil)  // /F 4: printable, no other flag

        let highlight = document.annotations[1]
        #expect(highlight.type == .highlight)
        #expect(highlight.color == RGBColor(red: 255, green: 255, blue: 0))
        #expect(highlight.note == "Highlight comment")
        #expect(highlight.updatedAt == "1990-04-28T00:00:00Z")
        #expect(highlight.blendMode == .multiply)
        // Two quadrilaterals: 141.73…207.11 × 695.36…719.36 and 28.35…113.39 × 676.16…700.16.
        #expect(
            highlight.rects == [
                Rect(left: 141.73, top: 122.53, width: 65.38, height: 24),
                Rect(left: 28.35, top: 141.73, width: 85.04, height: 24),
            ])

        let ink = document.annotations[2]
        #expect(ink.type == .ink)
        #expect(ink.creatorName == "Lucas")
        #expect(ink.note == "Hello world!")
        #expect(ink.lineWidth == 1)  // /Border [0 0 1]
        #expect(ink.strokeColor == RGBColor(red: 255, green: 255, blue: 0))
        #expect(ink.lines?.points.first?.first == Point(x: 28.35, y: 340.16))
        #expect(ink.lines?.points.first?.count == 5)
    }

    /// Six circles with popups in a linearized file whose first-page cross-reference offsets are
    /// wrong: the objects are found by scanning, the popups fold into their parents.
    @Test func circlesOfALinearizedFileWithWrongOffsets() throws {
        let document = try records("pdfium/testing/resources/linearized_bug_1055.pdf")
        #expect(document.annotations.map(\.type) == Array(repeating: .ellipse, count: 6))
        let first = try #require(document.annotations.first)
        #expect(first.id == "33")
        #expect(first.pdfObjectId == 33)
        #expect(first.name == "4a7e7875-ea9e-954f-a313-f2d680fd6d03")
        #expect(first.creatorName == "hnakashima")
        #expect(first.createdAt == "2017-11-09T13:14:38-05:00")
        #expect(first.strokeColor == RGBColor(red: 255, green: 0, blue: 0))
        // /Rect [177.317 530.817 373.398 722.582] on a 792-point-high page.
        #expect(first.bbox == Rect(left: 177.317, top: 69.418, width: 196.081, height: 191.765))
    }
}
