import Foundation

/// The words `pdftotext -bbox` (Poppler) finds on each page of a PDF: an independent reading
/// that the text extractor of InstantPDF is compared with.
public enum PopplerText {
    /// A word and its box in points from the top-left corner of the page's crop box, y down.
    public struct Word: Hashable, Sendable {
        public var text: String
        public var xMin: Double
        public var yMin: Double
        public var xMax: Double
        public var yMax: Double
    }

    /// Whether `pdftotext` is installed.
    public static let isAvailable: Bool = {
        (try? ChildProcess.runBlocking("pdftotext", ["-v"], includingErrors: true))?.status == 0
    }()

    /// The words of each page of the file, in page order.
    public static func words(of file: URL) throws -> [[Word]] {
        let (status, output) = try ChildProcess.runBlocking("pdftotext", ["-q", "-bbox", "-cropbox", file.path, "-"])
        guard status == 0 else { return [] }
        return parse(output)
    }

    /// Reads the XHTML that `pdftotext -bbox` writes: `<page …>` elements of `<word xMin=…>`.
    static func parse(_ xhtml: String) -> [[Word]] {
        var pages: [[Word]] = []
        for line in xhtml.split(separator: "\n") {
            let trimmed = line.drop { $0 == " " }
            if trimmed.hasPrefix("<page ") {
                pages.append([])
            } else if trimmed.hasPrefix("<word "), !pages.isEmpty,
                let close = trimmed.firstIndex(of: ">"), let end = trimmed.range(of: "</word>", options: .backwards)
            {
                let attributes = trimmed[..<close]
                func number(_ name: String) -> Double {
                    guard let start = attributes.range(of: "\(name)=\"") else { return .nan }
                    let rest = attributes[start.upperBound...]
                    return Double(rest.prefix { $0 != "\"" }) ?? .nan
                }
                let text = unescape(String(trimmed[trimmed.index(after: close)..<end.lowerBound]))
                pages[pages.count - 1].append(
                    Word(
                        text: text, xMin: number("xMin"), yMin: number("yMin"), xMax: number("xMax"),
                        yMax: number("yMax")))
            }
        }
        return pages
    }

    private static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }
}
