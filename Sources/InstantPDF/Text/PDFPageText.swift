import InstantJSON

/// The text of a page, as lines of words with their positions.
///
/// Positions are in the page's coordinates as Instant JSON uses them: points from the top-left
/// corner of the crop box, y down, before the page's `/Rotate` is applied.
public struct PDFPageText: Hashable, Sendable {
    /// The page's position, from 0.
    public var pageIndex: Int
    /// The lines, in the order the page's content shows them.
    public var lines: [PDFTextLine]
    /// What was not read, such as a font that could not be loaded or text beyond a limit.
    public var warnings: [String]

    public init(pageIndex: Int, lines: [PDFTextLine], warnings: [String] = []) {
        self.pageIndex = pageIndex
        self.lines = lines
        self.warnings = warnings
    }

    /// The words of every line, in order.
    public var words: [PDFTextWord] { lines.flatMap(\.words) }
}

/// A line of text: words on one baseline, close enough to be read together.
public struct PDFTextLine: Hashable, Sendable {
    /// The words' text, with a space where the words are apart.
    public var text: String
    /// The box around the words.
    public var frame: Rect
    public var words: [PDFTextWord]

    public init(text: String, frame: Rect, words: [PDFTextWord]) {
        self.text = text
        self.frame = frame
        self.words = words
    }
}

/// A word: characters shown next to each other, without a space between them.
public struct PDFTextWord: Hashable, Sendable {
    public var text: String
    /// From the first character's origin to the last one's advance, and from the font's descent
    /// to its ascent (as `pdftotext -bbox` measures words).
    public var frame: Rect
    /// The characters, each with its box: what a search highlights.
    public var characters: [PDFTextCharacter]

    public init(text: String, frame: Rect, characters: [PDFTextCharacter]) {
        self.text = text
        self.frame = frame
        self.characters = characters
    }
}

/// One shown character (or ligature, whose text has several characters) and its box.
public struct PDFTextCharacter: Hashable, Sendable {
    public var text: String
    public var frame: Rect

    public init(text: String, frame: Rect) {
        self.text = text
        self.frame = frame
    }
}
