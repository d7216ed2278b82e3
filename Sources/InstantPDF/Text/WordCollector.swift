import InstantJSON

/// Joins shown characters into words and words into lines.
///
/// Words follow the rules `pdftotext` uses, so that both tools find the same words: a word ends
/// at a white-space character, where the next character is more than a tenth of the font size
/// after the last one or overlaps it by more than a fifth, where it leaves the baseline by more
/// than half a point, changes font size or direction, or repeats the last character at the same
/// place (text drawn twice to look bold, whose copies are then dropped). Lines are words in the
/// order of the content on one baseline, each after the one before.
struct WordCollector {
    /// A character placed on the page (y down, from the crop box's top-left corner).
    private struct Placed {
        var text: String
        var box: Box
        /// Along the writing direction: where the character starts and where its advance ends.
        var start: Double
        var end: Double
        /// Across the writing direction: the baseline.
        var base: Double
        var fontSize: Double
        var direction: Int
    }

    /// An axis-aligned box, y down.
    private struct Box {
        var minX: Double
        var minY: Double
        var maxX: Double
        var maxY: Double

        func union(_ other: Box) -> Box {
            Box(
                minX: min(minX, other.minX), minY: min(minY, other.minY), maxX: max(maxX, other.maxX),
                maxY: max(maxY, other.maxY))
        }

        var rect: Rect {
            Rect(
                left: PageSpace.rounded(minX), top: PageSpace.rounded(minY), width: PageSpace.rounded(maxX - minX),
                height: PageSpace.rounded(maxY - minY))
        }
    }

    private struct Word {
        var characters: [Placed]
        var box: Box
        var base: Double { characters[0].base }
        var fontSize: Double { characters[0].fontSize }
        var direction: Int { characters[0].direction }
        var start: Double { characters[0].start }
        var end: Double { characters[characters.count - 1].end }
        var text: String { characters.map(\.text).joined() }
    }

    private let cropBox: PDFRect
    private var words: [Word] = []
    private var current: Word?
    private var lastCharacterOverlapped = false

    init(cropBox: PDFRect) {
        self.cropBox = cropBox
    }

    /// Adds a character drawn with `rendering` (glyph space to user space) that advances by
    /// `width` (at font size 1).
    mutating func add(_ text: String?, rendering: AffineTransform, width: Double, font: TextFont) {
        guard let text else { return }
        // Glyph-space corners: from the descent to the ascent along the advance, or for vertical
        // writing a glyph one unit high centred below its origin.
        let (left, right, bottom, top) =
            font.isVertical ? (-0.5, 0.5, -width, 0.0) : (0.0, width, font.descent, font.ascent)
        let corners = [(left, bottom), (right, bottom), (left, top), (right, top)].map {
            page(rendering.apply($0.0, $0.1))
        }
        let box = Box(
            minX: corners.map(\.x).min()!, minY: corners.map(\.y).min()!, maxX: corners.map(\.x).max()!,
            maxY: corners.map(\.y).max()!)
        guard box.minX.isFinite, box.maxY.isFinite, box.minY.isFinite, box.maxX.isFinite else { return }
        // Characters entirely off the page are not part of its text.
        guard box.maxX >= 0, box.minX <= cropBox.width, box.maxY >= 0, box.minY <= cropBox.height else { return }
        if text.unicodeScalars.allSatisfy({ $0.properties.isWhitespace || $0.value < 0x20 }) {
            endWord()
            return
        }
        let origin = page(rendering.apply(0, 0))
        let advanceEnd = page(font.isVertical ? rendering.apply(0, -width) : rendering.apply(width, 0))
        var (dx, dy) = (advanceEnd.x - origin.x, advanceEnd.y - origin.y)
        if abs(dx) < 1e-9, abs(dy) < 1e-9 {
            let unit = page(rendering.apply(font.isVertical ? 0 : 1, font.isVertical ? -1 : 0))
            (dx, dy) = (unit.x - origin.x, unit.y - origin.y)
        }
        let direction = abs(dx) >= abs(dy) ? (dx >= 0 ? 0 : 2) : (dy >= 0 ? 1 : 3)
        let fontSize = (rendering.c * rendering.c + rendering.d * rendering.d).squareRoot()
        func along(_ point: (x: Double, y: Double)) -> Double {
            switch direction {
            case 0: point.x
            case 1: point.y
            case 2: -point.x
            default: -point.y
            }
        }
        let placed = Placed(
            text: text, box: box, start: along(origin), end: along(advanceEnd),
            base: direction % 2 == 0 ? origin.y : origin.x, fontSize: fontSize, direction: direction)
        if let word = current {
            let last = word.characters[word.characters.count - 1]
            let gap = placed.start - word.end
            let overlap =
                abs(placed.start - last.start) < 0.1 * word.fontSize
                && abs(placed.base - word.base) < 0.2 * word.fontSize
            if overlap || lastCharacterOverlapped || gap < -0.2 * word.fontSize || gap > 0.1 * word.fontSize
                || abs(placed.base - word.base) > 0.5 || placed.fontSize != word.fontSize
                || placed.direction != word.direction
            {
                lastCharacterOverlapped = overlap
                endWord()
            } else {
                lastCharacterOverlapped = false
            }
        }
        if current == nil {
            current = Word(characters: [placed], box: box)
        } else {
            current!.characters.append(placed)
            current!.box = current!.box.union(box)
        }
    }

    private mutating func endWord() {
        guard let word = current else { return }
        current = nil
        // Text drawn twice at (nearly) the same place, to look bold, is one word.
        let isCopy = words.suffix(64).contains { other in
            other.text == word.text && other.direction == word.direction
                && abs(other.start - word.start) < 0.1 * word.fontSize
                && abs(other.base - word.base) < 0.2 * word.fontSize
        }
        if !isCopy { words.append(word) }
    }

    /// A user-space point in page coordinates: from the crop box's top-left corner, y down.
    private func page(_ point: (x: Double, y: Double)) -> (x: Double, y: Double) {
        (point.x - cropBox.minX, cropBox.maxY - point.y)
    }

    /// The lines of the words collected so far.
    mutating func lines() -> [PDFTextLine] {
        endWord()
        var lines: [PDFTextLine] = []
        var line: [Word] = []
        func finish() {
            guard let first = line.first else { return }
            var text = first.text
            for (previous, word) in zip(line, line.dropFirst()) {
                if word.start - previous.end > 0.1 * previous.fontSize { text += " " }
                text += word.text
            }
            let box = line.dropFirst().reduce(first.box) { $0.union($1.box) }
            lines.append(
                PDFTextLine(
                    text: text, frame: box.rect,
                    words: line.map { word in
                        PDFTextWord(
                            text: word.text, frame: word.box.rect,
                            characters: word.characters.map { PDFTextCharacter(text: $0.text, frame: $0.box.rect) })
                    }))
            line.removeAll()
        }
        for word in words {
            if let previous = line.last {
                let size = max(previous.fontSize, word.fontSize)
                let sameLine =
                    word.direction == previous.direction && abs(word.base - previous.base) <= 0.5 * size
                    && word.start >= previous.end - 0.5 * size && word.start - previous.end <= 3 * size
                if !sameLine { finish() }
            }
            line.append(word)
        }
        finish()
        return lines
    }
}
