import Foundation
import InstantJSON

/// A place on a page where a search matched.
public struct PDFTextMatch: Hashable, Sendable {
    public var pageIndex: Int
    /// The line (or part of it) around the match.
    public var previewText: String
    /// Where the match is in ``previewText``, in UTF-16 code units (as JavaScript counts).
    public var rangeInPreview: Range<Int>
    /// The boxes of the matched characters, one per line the match spans.
    public var rects: [Rect]
}

extension PDFPageText {
    /// The most characters of the preview on each side of a match.
    static let previewContext = 40

    /// The page's text as a search sees it: the lines, each followed by a line break.
    public var searchableText: String { lines.map { $0.text + "\n" }.joined() }

    /// The matches of a regular expression in ``searchableText``, at most `limit`.
    public func matches(of expression: NSRegularExpression, limit: Int) -> [PDFTextMatch] {
        let text = searchableText as NSString
        // The box of each UTF-16 unit of the text (nil for spaces and line breaks), and the line
        // each unit belongs to.
        var boxes: [Rect?] = []
        var lineOfUnit: [Int] = []
        var lineStarts: [Int] = []
        for (number, line) in lines.enumerated() {
            lineStarts.append(boxes.count)
            var words = line.words.makeIterator()
            var characters = words.next()?.characters.makeIterator()
            // Walk the line's text and its characters together: every character's text is in the
            // line's text in order, separated by single spaces between words.
            var pending: [Rect?] = []
            var remaining = Substring(line.text)
            while !remaining.isEmpty {
                guard
                    let character = characters?.next()
                        ?? {
                            characters = words.next()?.characters.makeIterator()
                            return characters?.next()
                        }()
                else { break }
                while remaining.hasPrefix(" "), !character.text.hasPrefix(" ") {
                    pending.append(nil)
                    remaining = remaining.dropFirst()
                }
                guard remaining.hasPrefix(character.text) else { break }
                pending += Array(repeating: character.frame, count: character.text.utf16.count)
                remaining = remaining.dropFirst(character.text.count)
            }
            pending += Array(repeating: nil, count: remaining.utf16.count + 1)
            boxes += pending
            lineOfUnit += Array(repeating: number, count: pending.count)
        }
        var found: [PDFTextMatch] = []
        expression.enumerateMatches(in: searchableText, range: NSRange(location: 0, length: text.length)) {
            result, _, stop in
            guard let range = result?.range, range.length > 0, range.location + range.length <= boxes.count else {
                return
            }
            var rects: [Int: Rect] = [:]
            for unit in range.location..<(range.location + range.length) {
                guard let box = boxes[unit] else { continue }
                rects[lineOfUnit[unit]] = rects[lineOfUnit[unit]].map { $0.union(box) } ?? box
            }
            let line = lineOfUnit[range.location]
            let lineStart = lineStarts[line]
            let lineLength = (lines[line].text as NSString).length
            let previewStart = max(lineStart, range.location - Self.previewContext)
            let previewEnd = max(
                range.location + range.length,
                min(lineStart + lineLength, range.location + range.length + Self.previewContext))
            let preview = text.substring(with: NSRange(location: previewStart, length: previewEnd - previewStart))
            let offset = range.location - previewStart
            found.append(
                PDFTextMatch(
                    pageIndex: pageIndex, previewText: preview.replacingOccurrences(of: "\n", with: " "),
                    rangeInPreview: offset..<(offset + range.length), rects: rects.keys.sorted().map { rects[$0]! }))
            if found.count >= limit { stop.pointee = true }
        }
        return found
    }
}

extension Rect {
    /// The smallest rectangle holding both.
    func union(_ other: Rect) -> Rect {
        let left = min(self.left, other.left)
        let top = min(self.top, other.top)
        let right = max(self.left + width, other.left + other.width)
        let bottom = max(self.top + height, other.top + other.height)
        return Rect(left: left, top: top, width: right - left, height: bottom - top)
    }
}
