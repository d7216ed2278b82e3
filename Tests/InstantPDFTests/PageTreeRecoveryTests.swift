import Foundation
import InstantJSON
import InstantTesting
import Testing

@testable import InstantPDF

/// Page trees that hold no page, read as other readers read them: from the file's page objects,
/// or as the empty pages the tree counts.
@Suite("Page tree recovery")
struct PageTreeRecoveryTests {
    static func pdf(_ objects: [String]) -> Data {
        TestPDF.assemble(objects.map { Data($0.utf8) }, trailer: "/Root 1 0 R")
    }

    @Test func pageObjectsOutsideABrokenTreeAreFound() throws {
        // The catalog names a /Pages object that is not in the file; two pages point to it.
        let document = try PDFDocument(
            data: Self.pdf([
                "<< /Type /Catalog /Pages 9 0 R >>",
                "<< /Type /Page /Parent 9 0 R /MediaBox [0 0 300 400] >>",
                "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
                "<< /Type /Page /Parent 9 0 R /MediaBox [0 0 500 600] /Rotate 90 >>",
            ]))
        #expect(document.pageCount == 2)
        #expect(document.pages.map(\.reference?.number) == [2, 4])
        #expect(document.pages.map(\.mediaBox.width) == [300, 500])
        #expect(document.pages[1].rotation == 90)
        #expect(document.warnings.contains { $0.contains("page objects") })
    }

    @Test(arguments: [
        ("<< /Type /Pages /Count 2 /MediaBox [0 0 200 100] >>", 2),  // no /Kids
        ("<< /Type /Pages /Count 1 /Kids [2 0 R] /MediaBox [0 0 200 100] >>", 1),  // a tree that is its own kid
        ("<< /Type /Pages /Count 1000000000 /Kids [] /MediaBox [0 0 200 100] >>", PDFPage.maximumEmptyPages),
    ])
    func aTreeThatCountsPagesButHoldsNoneGivesEmptyPages(pagesNode: String, expected: Int) throws {
        let document = try PDFDocument(data: Self.pdf(["<< /Type /Catalog /Pages 2 0 R >>", pagesNode]))
        #expect(document.pageCount == expected)
        #expect(document.pages.allSatisfy { $0.mediaBox.width == 200 && $0.mediaBox.height == 100 })
        #expect(document.warnings.contains { $0.contains("empty pages") })
    }

    @Test func aTreeWithoutPagesOrCountHasNoPages() throws {
        let document = try PDFDocument(
            data: Self.pdf(["<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [] >>"]))
        #expect(document.pageCount == 0)
    }

    /// Annotations on the empty pages go into page objects the writer adds, under a page tree root
    /// that lists them: the written file has real pages with the annotations.
    @Test(arguments: [
        "<< /Type /Pages /Count 2 /MediaBox [0 0 200 100] >>", "<< /Type /Pages /Count 1 /Kids [2 0 R] >>",
    ])
    func annotationsOnEmptyPagesAreWrittenIntoNewPages(pagesNode: String) throws {
        let original = try PDFDocument(data: Self.pdf(["<< /Type /Catalog /Pages 2 0 R >>", pagesNode]))
        var note = WriterFixtures.base(.note, "n", left: 10, top: 10, width: 20, height: 20)
        note.text = AnnotationText(value: "on an empty page")
        let written = try original.writing(InstantDocumentJSON(annotations: [note]))
        let reread = try PDFDocument(data: written)
        #expect(reread.pageCount == original.pageCount)
        #expect(reread.pages.allSatisfy { $0.reference != nil })
        #expect(reread.annotations().map(\.name) == ["n"])
        #expect(!reread.warnings.contains { $0.contains("empty pages") })
    }
}
