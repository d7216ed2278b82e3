import Foundation

/// Small, valid PDF files built in memory for tests: a page tree, an `/ID`, an `/Info` title and
/// a correct cross-reference table.
public enum TestPDF {
    /// A PDF with the given number of US Letter pages.
    /// - Parameters:
    ///   - pageCount: The number of pages (at least 1).
    ///   - title: The `/Info` title, if any.
    ///   - seed: Changes the file identifier (and so the bytes) between otherwise equal files.
    ///   - contentSize: The size in bytes of the first page's content stream (blank: spaces), to
    ///     make files of a given size.
    public static func make(pageCount: Int, title: String? = nil, seed: Int = 0, contentSize: Int = 0) -> Data {
        let pages = max(1, pageCount)
        var objects: [String] = []
        objects.append("<< /Type /Catalog /Pages 2 0 R >>")
        let kids = (0..<pages).map { "\(4 + $0) 0 R" }.joined(separator: " ")
        objects.append("<< /Type /Pages /Kids [\(kids)] /Count \(pages) >>")
        let escapedTitle = (title ?? "").replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "(", with: "\\(").replacingOccurrences(of: ")", with: "\\)")
        objects.append(title == nil ? "<< /Producer (OpenInstant tests) >>" : "<< /Title (\(escapedTitle)) >>")
        let contentObject = 4 + pages
        for page in 0..<pages {
            let contents = page == 0 && contentSize > 0 ? " /Contents \(contentObject) 0 R" : ""
            objects.append("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << >>\(contents) >>")
        }
        if contentSize > 0 {
            objects.append(
                "<< /Length \(contentSize) >>\nstream\n" + String(repeating: " ", count: contentSize) + "\nendstream")
        }
        var output = "%PDF-1.7\n%\u{E2}\u{E3}\u{CF}\u{D3}\n"
        var bytes = Data(output.utf8)
        var offsets: [Int] = []
        for (index, object) in objects.enumerated() {
            offsets.append(bytes.count)
            bytes.append(Data("\(index + 1) 0 obj\n\(object)\nendobj\n".utf8))
        }
        let xrefOffset = bytes.count
        output = "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets {
            output += String(repeating: "0", count: 10 - String(offset).count) + "\(offset) 00000 n \n"
        }
        let identifier = String(format: "%032x", seed &* 2_654_435_761 & 0xFFFF_FFFF)
        output +=
            "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R /Info 3 0 R /ID [<\(identifier)> <\(identifier)>] >>\n"
        output += "startxref\n\(xrefOffset)\n%%EOF\n"
        bytes.append(Data(output.utf8))
        return bytes
    }
}
