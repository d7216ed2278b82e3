import Foundation

/// Small, valid PDF files built in memory for tests: a page tree, an `/ID`, an `/Info` title and
/// a correct cross-reference section. The fixtures in the `TestPDF+…` files (annotations, a form,
/// encryption) are built the same way, so every test runs without files from outside the repository.
public enum TestPDF {
    /// How a file's cross-reference section is written.
    public enum CrossReference: Sendable {
        /// A classic `xref` table followed by a `trailer` dictionary (PDF 1.0 and later).
        case table
        /// A cross-reference stream (`/Type /XRef`, PDF 1.5 and later), which is also the trailer.
        case stream
    }

    /// A PDF with the given number of US Letter pages.
    /// - Parameters:
    ///   - pageCount: The number of pages (at least 1).
    ///   - title: The `/Info` title, if any.
    ///   - seed: Changes the file identifier (and so the bytes) between otherwise equal files.
    ///   - contentSize: The size in bytes of the first page's content stream (blank: spaces), to
    ///     make files of a given size.
    ///   - crossReference: How the cross-reference section is written.
    public static func make(
        pageCount: Int, title: String? = nil, seed: Int = 0, contentSize: Int = 0,
        crossReference: CrossReference = .table
    ) -> Data {
        let pages = max(1, pageCount)
        var objects: [String] = []
        objects.append("<< /Type /Catalog /Pages 2 0 R >>")
        let kids = (0..<pages).map { "\(4 + $0) 0 R" }.joined(separator: " ")
        objects.append("<< /Type /Pages /Kids [\(kids)] /Count \(pages) >>")
        objects.append(title.map { "<< /Title \(literal($0)) >>" } ?? "<< /Producer (OpenInstant tests) >>")
        let contentObject = 4 + pages
        for page in 0..<pages {
            let contents = page == 0 && contentSize > 0 ? " /Contents \(contentObject) 0 R" : ""
            objects.append("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << >>\(contents) >>")
        }
        if contentSize > 0 {
            objects.append(stream(String(repeating: " ", count: contentSize)))
        }
        return assemble(
            objects.map { Data($0.utf8) }, trailer: "/Root 1 0 R /Info 3 0 R /ID \(identifier(seed: seed))",
            crossReference: crossReference)
    }

    /// Numbers the objects from 1 in order, writes each as `n 0 obj … endobj` after a PDF 1.7
    /// header, and ends the file with a cross-reference section that gives every object's offset.
    /// - Parameters:
    ///   - objects: The body of each object (what goes between `obj` and `endobj`), as bytes so
    ///     that streams may hold binary data.
    ///   - trailer: The trailer's entries other than `/Size`, e.g. `/Root 1 0 R /ID [<…> <…>]`.
    ///   - crossReference: A table and trailer, or a cross-reference stream (which takes the next
    ///     object number).
    public static func assemble(_ objects: [Data], trailer: String, crossReference: CrossReference = .table) -> Data {
        var bytes = Data("%PDF-1.7\n%\u{E2}\u{E3}\u{CF}\u{D3}\n".utf8)
        var offsets: [Int] = []
        for (index, object) in objects.enumerated() {
            offsets.append(bytes.count)
            bytes.append(Data("\(index + 1) 0 obj\n".utf8))
            bytes.append(object)
            bytes.append(Data("\nendobj\n".utf8))
        }
        let sectionOffset = bytes.count
        switch crossReference {
        case .table:
            var section = "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
            for offset in offsets {
                section += String(repeating: "0", count: 10 - String(offset).count) + "\(offset) 00000 n \n"
            }
            section += "trailer\n<< /Size \(objects.count + 1) \(trailer) >>\n"
            bytes.append(Data(section.utf8))
        case .stream:
            // Rows of 1 + 4 + 2 bytes: type, offset, generation; the stream itself is the last row.
            func row(_ type: UInt8, _ field: Int, _ generation: Int) -> [UInt8] {
                [type] + (0..<4).reversed().map { UInt8(truncatingIfNeeded: field >> ($0 * 8)) }
                    + [UInt8(truncatingIfNeeded: generation >> 8), UInt8(truncatingIfNeeded: generation)]
            }
            var rows = row(0, 0, 65535)
            for offset in offsets + [sectionOffset] { rows += row(1, offset, 0) }
            let size = objects.count + 2
            bytes.append(Data("\(size - 1) 0 obj\n".utf8))
            bytes.append(
                Data("<< /Type /XRef /Size \(size) /W [1 4 2] \(trailer) /Length \(rows.count) >>\nstream\n".utf8))
            bytes.append(Data(rows))
            bytes.append(Data("\nendstream\nendobj\n".utf8))
        }
        bytes.append(Data("startxref\n\(sectionOffset)\n%%EOF\n".utf8))
        return bytes
    }

    /// A stream object of unfiltered text (a content stream, say).
    static func stream(_ content: String) -> String {
        "<< /Length \(content.utf8.count) >>\nstream\n\(content)\nendstream"
    }

    /// A literal string, `(…)`, with its backslashes and parentheses escaped.
    static func literal(_ text: String) -> String {
        "("
            + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "(", with: "\\(")
            .replacingOccurrences(of: ")", with: "\\)") + ")"
    }

    /// The trailer's `/ID` array: the same 16 bytes twice, derived from `seed`.
    static func identifier(seed: Int) -> String {
        let identifier = String(format: "%032x", seed &* 2_654_435_761 & 0xFFFF_FFFF)
        return "[<\(identifier)> <\(identifier)>]"
    }
}
