import Foundation
import InstantJSON
import InstantTesting
import Testing

@testable import InstantPDF

@Suite("Document information: metadata, permissions, page labels, outline")
struct DocumentInformationTests {
    @Test func outlineReadsItemsChildrenAndActionsAndStopsAtALoop() throws {
        let outline = try PDFDocument(data: TestPDF.outlined()).outline()
        #expect(outline.map(\.title) == ["Chapter 1", "Web"])
        let chapter = outline[0]
        #expect(chapter.action == .goTo(pageIndex: 0))
        #expect(chapter.isExpanded && chapter.isBold && !chapter.isItalic)
        #expect(chapter.color == RGBColor(red: 255, green: 0, blue: 0))
        #expect(chapter.children.map(\.title) == ["Section 1.1"])
        #expect(chapter.children.first?.action == .goTo(pageIndex: 1))
        #expect(chapter.children.first?.isItalic == true)
        #expect(outline[1].action == Action.uri("https://example.com"))
        #expect(outline[1].children.isEmpty)
        #expect(try PDFDocument(data: TestPDF.make(pageCount: 1)).outline().isEmpty)
    }

    @Test func metadataPermissionsLabelsAndBoxes() throws {
        let document = try PDFDocument(data: TestPDF.outlined())
        #expect(document.metadata.title == "Outlined")
        #expect(document.metadata.author == "Ada")
        #expect(document.metadata.producer == "hand")
        #expect(document.metadata.created == "2026-01-01T12:00:00Z")
        #expect(document.metadata.subject == nil)
        #expect(document.permissions == .all)
        #expect(!document.hasXFA)
        #expect(document.pageLabels == ["i", "A-5"])
        #expect(try PDFDocument(data: TestPDF.make(pageCount: 3)).pageLabels == ["1", "2", "3"])
        #expect(document.box("TrimBox", of: document.pages[0]) == PDFRect(minX: 10, minY: 10, maxX: 602, maxY: 782))
        #expect(document.box("TrimBox", of: document.pages[1]) == nil)
    }

    @Test func permissionBitsAndLabelStyles() {
        // Print and fill forms only (bits 3 and 9), with the reserved high bits set as writers do.
        let permissions = PDFPermissions(bits: Int32(bitPattern: 0xFFFF_F000) | (1 << 2) | (1 << 8))
        #expect(permissions.print && permissions.fillForms)
        #expect(!permissions.modify && !permissions.extract && !permissions.annotationsAndForms)
        #expect(permissions.printHighQuality == false)
        #expect(PDFDocument.roman(1994) == "MCMXCIV")
        #expect(PDFDocument.letters(1) == "A" && PDFDocument.letters(28) == "BB")
    }
}
