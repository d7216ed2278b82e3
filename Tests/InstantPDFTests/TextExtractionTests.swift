import Foundation
import InstantJSON
import InstantTesting
import Testing

@testable import InstantPDF

@Suite("Page text")
struct TextExtractionTests {
    @Test func wordsAndLinesOfHelveticaText() throws {
        let pdf = TestPDF.text(pages: [
            [.init("Hello World", x: 72, y: 700, size: 12), .init("Second line", x: 72, y: 680, size: 10)]
        ])
        let text = try PDFDocument(data: pdf).text(ofPage: 0)
        #expect(text.lines.map(\.text) == ["Hello World", "Second line"])
        let hello = try #require(text.words.first)
        #expect(hello.text == "Hello")
        // Helvetica: H 722, e 556, l 222, l 222, o 556 thousandths; ascender 718, descender -207.
        #expect(abs(hello.frame.left - 72) < 0.001)
        #expect(abs(hello.frame.width - 2.278 * 12) < 0.001)
        #expect(abs(hello.frame.top - (792 - 700 - 0.718 * 12)) < 0.001)
        #expect(abs(hello.frame.height - (0.718 + 0.207) * 12) < 0.001)
        #expect(hello.characters.map(\.text) == ["H", "e", "l", "l", "o"])
        #expect(text.words.map(\.text) == ["Hello", "World", "Second", "line"])
    }

    @Test func pageIndexOutsideTheDocumentIsAnError() throws {
        let document = try PDFDocument(data: TestPDF.text(pages: [[]]))
        #expect(try document.text(ofPage: 0).lines.isEmpty)
        #expect(throws: PDFError.self) { try document.text(ofPage: 1) }
    }

    /// A one-page PDF whose page uses `font` as /F1 and draws `content`, with `extra` objects
    /// from number 5 on.
    static func page(font: String, content: String, extra: [String] = [], xObjects: String = "") -> Data {
        func stream(_ text: String) -> String { "<< /Length \(text.utf8.count) >>\nstream\n\(text)\nendstream" }
        let objects =
            [
                "<< /Type /Catalog /Pages 2 0 R >>",
                "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 600 800] /Resources << /Font << /F1 \(font) >> "
                    + "\(xObjects) >> /Contents 4 0 R >>",
                stream(content),
            ] + extra.map { $0.hasPrefix("stream:") ? stream(String($0.dropFirst(7))) : $0 }
        return TestPDF.assemble(objects.map { Data($0.utf8) }, trailer: "/Root 1 0 R")
    }

    /// Two-byte codes through `/ToUnicode`, with more mappings in one block than a content
    /// stream's operator takes operands (a CMap's blocks hold up to 100).
    @Test func compositeFontTextComesFromToUnicode() throws {
        let codes = (0..<90).map { String(format: "<%04X> <%04X>", 0x100 + $0, 0x41 + ($0 % 26)) }
        let cmap = """
            /CIDInit /ProcSet findresource begin 12 dict begin begincmap
            1 begincodespacerange <0000> <FFFF> endcodespacerange
            \(codes.count) beginbfchar
            \(codes.joined(separator: "\n"))
            endbfchar
            1 beginbfrange <0200> <0202> [<0078> <0079> <007A>] endbfrange
            endcmap CMapName currentdict /CMap defineresource pop end end
            """
        let pdf = Self.page(
            font: "5 0 R",
            content: "BT /F1 10 Tf 100 700 Td <0100010101020200> Tj ET",
            extra: [
                "<< /Type /Font /Subtype /Type0 /BaseFont /Test /Encoding /Identity-H "
                    + "/DescendantFonts [6 0 R] /ToUnicode 7 0 R >>",
                "<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Test /DW 500 /W [256 [600 700]] >>",
                "stream:" + cmap,
            ])
        let text = try PDFDocument(data: pdf).text(ofPage: 0)
        let word = try #require(text.words.first)
        #expect(word.text == "ABCx")
        // Widths: 600 and 700 from /W, then /DW 500 twice, at 10 points.
        #expect(abs(word.frame.width - 23) < 0.001)
        #expect(word.characters.map(\.frame.left) == [100, 106, 113, 118])
    }

    /// A form XObject that draws itself is entered once; its text is placed by its /Matrix.
    @Test func formsAreEnteredWithTheirMatrixAndNeverIntoThemselves() throws {
        let pdf = Self.page(
            font: "<< /Type /Font /Subtype /Type1 /BaseFont /Courier >>",
            content: "q 1 0 0 1 50 50 cm /Fm Do Q",
            extra: [
                "<< /Type /XObject /Subtype /Form /BBox [0 0 600 800] /Matrix [1 0 0 1 10 0] "
                    + "/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Courier >> >> "
                    + "/XObject << /Fm 5 0 R >> >> /Length 40 >>\nstream\nBT /F1 10 Tf 0 0 Td (Inside) Tj ET /Fm Do\nendstream"
            ],
            xObjects: "/XObject << /Fm 5 0 R >>")
        let text = try PDFDocument(data: pdf).text(ofPage: 0)
        #expect(text.words.map(\.text) == ["Inside"])
        #expect(text.words.first?.frame.left == 60)
        // Courier: 600 per character; ascender 629, descender -157.
        #expect(abs((text.words.first?.frame.width ?? 0) - 36) < 0.001)
        #expect(abs((text.words.first?.frame.top ?? 0) - (800 - 50 - 6.29)) < 0.001)
    }

    /// Broken content never fails the page: stray tokens, a missing font, an unterminated
    /// string and an inline image holding `Tj` are skipped.
    @Test func damagedContentIsSkipped() throws {
        let pdf = Self.page(
            font: "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            content: """
                ] } BT /F9 12 Tf 10 10 Td (lost) Tj ET
                BI /W 2 /H 1 /BPC 8 /CS /G ID (x) Tj EI
                BT /F1 12 Tf 72 700 Td [(Kept) -1000 (words)] TJ ET
                BT /F1 12 Tf 72 600 Td (unterminated
                """)
        let text = try PDFDocument(data: pdf).text(ofPage: 0)
        #expect(text.words.map(\.text) == ["Kept", "words"])
        #expect(text.warnings.contains { $0.contains("/F9") })
    }
}
