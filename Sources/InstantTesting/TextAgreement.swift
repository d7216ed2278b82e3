import Foundation
import InstantJSON
import InstantPDF

/// How many of the words `pdftotext -bbox` finds InstantPDF finds too, with the same text and a
/// box within ``tolerance`` points on every side (pages whose `/Rotate` is 0; texts compared
/// after Unicode compatibility normalization, which spells out ligatures).
public struct TextAgreement: Sendable {
    public static let tolerance = 2.0

    public struct File: Sendable {
        public var path: String
        public var theirs: Int
        public var ours: Int
        public var matched: Int
        public var missed: Int { theirs - matched }
    }

    public var files: [File] = []
    /// Pages compared (those without `/Rotate`), and pages both read.
    public var pages = 0
    public var pagesRead = 0
    public var theirs: Int { files.reduce(0) { $0 + $1.theirs } }
    public var ours: Int { files.reduce(0) { $0 + $1.ours } }
    public var matched: Int { files.reduce(0) { $0 + $1.matched } }
    /// The share of pdftotext's words that InstantPDF finds.
    public var share: Double { theirs == 0 ? 0 : Double(matched) / Double(theirs) }
    /// Seconds InstantPDF and pdftotext took, reading and extracting every page of the files.
    public var ourSeconds = 0.0
    public var theirSeconds = 0.0

    public var summary: String {
        let percent = String(format: "%.1f", share * 100)
        return "\(matched) of pdftotext's \(theirs) words (\(percent)%) found with the same text and box "
            + "within \(Self.tolerance) pt; InstantPDF found \(ours) words; \(pages) pages of \(files.count) files"
    }

    /// Compares the two readings of each file that both open.
    public static func measure(_ files: [URL]) throws -> TextAgreement {
        var agreement = TextAgreement()
        for url in files {
            let start = Date()
            guard let document = try? PDFDocument(contentsOf: url),
                let texts = try? document.text(ofPages: 0..<document.pageCount)
            else { continue }
            let middle = Date()
            let poppler = try PopplerText.words(of: url)
            guard poppler.count == texts.count else { continue }
            agreement.ourSeconds += middle.timeIntervalSince(start)
            agreement.theirSeconds += Date().timeIntervalSince(middle)
            agreement.pagesRead += texts.count
            var file = File(path: url.lastPathComponent, theirs: 0, ours: 0, matched: 0)
            for (index, text) in texts.enumerated() where document.pages[index].rotation == 0 {
                agreement.pages += 1
                let ours = text.words
                let theirs = poppler[index]
                file.theirs += theirs.count
                file.ours += ours.count
                var unmatched = Dictionary(grouping: ours, by: { normalized($0.text) })
                for word in theirs {
                    let key = normalized(word.text)
                    guard let candidates = unmatched[key],
                        let found = candidates.firstIndex(where: { close($0.frame, word) })
                    else { continue }
                    file.matched += 1
                    unmatched[key]!.remove(at: found)
                }
            }
            agreement.files.append(file)
        }
        return agreement
    }

    private static func normalized(_ text: String) -> String {
        text.precomposedStringWithCompatibilityMapping
    }

    private static func close(_ frame: Rect, _ word: PopplerText.Word) -> Bool {
        abs(frame.left - word.xMin) <= tolerance && abs(frame.top - word.yMin) <= tolerance
            && abs(frame.left + frame.width - word.xMax) <= tolerance
            && abs(frame.top + frame.height - word.yMax) <= tolerance
    }
}
