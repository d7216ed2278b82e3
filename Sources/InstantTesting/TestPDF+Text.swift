import Foundation

extension TestPDF {
    /// A line of Helvetica text on a page.
    public struct TextLine: Sendable {
        /// The text (ASCII).
        public var text: String
        /// Where its baseline starts, in PDF points from the page's bottom left.
        public var x: Double
        public var y: Double
        /// The font size in points.
        public var size: Double

        public init(_ text: String, x: Double, y: Double, size: Double) {
            self.text = text
            self.x = x
            self.y = y
            self.size = size
        }
    }

    /// A PDF of US Letter pages that show lines of Helvetica text, which viewers can select and
    /// `pdftotext` can place.
    /// - Parameters:
    ///   - pages: The lines of each page.
    ///   - seed: Changes the file identifier between otherwise equal files.
    public static func text(pages: [[TextLine]], seed: Int = 0) -> Data {
        let pageList = pages.isEmpty ? [[]] : pages
        var objects: [String] = []
        objects.append("<< /Type /Catalog /Pages 2 0 R >>")
        let kids = (0..<pageList.count).map { "\(5 + 2 * $0) 0 R" }.joined(separator: " ")
        objects.append("<< /Type /Pages /Kids [\(kids)] /Count \(pageList.count) >>")
        objects.append("<< /Producer (OpenInstant tests) >>")
        objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
        for (index, lines) in pageList.enumerated() {
            objects.append(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> "
                    + "/Contents \(6 + 2 * index) 0 R >>")
            let content = lines.map { line in
                "BT /F1 \(line.size) Tf \(line.x) \(line.y) Td \(literal(line.text)) Tj ET"
            }.joined(separator: "\n")
            objects.append(stream(content))
        }
        return assemble(
            objects.map { Data($0.utf8) }, trailer: "/Root 1 0 R /Info 3 0 R /ID \(identifier(seed: seed))")
    }
}
