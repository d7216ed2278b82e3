import Foundation
import InstantJSON

/// Runs a page's content streams (ISO 32000-1, 9.3 and 9.4) with the state that positions text,
/// and hands each shown character, placed on the page, to a ``WordCollector``.
///
/// Graphics other than text are ignored. Form XObjects are entered (at most
/// ``maximumFormDepth`` deep, never into one of their own ancestors); Type 3 glyph procedures
/// and annotations are not. Work is bounded: at most ``maximumOperations`` operators and
/// ``maximumCharacters`` characters per page, and every stream decoded takes from the
/// document's decode budget.
struct TextExtractor {
    static let maximumOperations = 2_000_000
    static let maximumCharacters = 500_000
    static let maximumFormDepth = 12
    static let maximumStateDepth = 256

    /// The parameters that `q` saves and `Q` restores.
    private struct State {
        var ctm = AffineTransform.identity
        var font: TextFont?
        var fontSize = 0.0
        var characterSpacing = 0.0
        var wordSpacing = 0.0
        var horizontalScaling = 1.0
        var leading = 0.0
        var rise = 0.0
    }

    private let document: PDFDocument
    private let page: PDFPage
    private var fonts: TextFontCache
    private var state = State()
    private var stack: [State] = []
    private var textMatrix = AffineTransform.identity
    private var lineMatrix = AffineTransform.identity
    private var operations = 0
    private var characters = 0
    private var formAncestors: Set<Int> = []
    private(set) var collector: WordCollector
    private(set) var warnings: [String] = []

    init(document: PDFDocument, page: PDFPage, fonts: TextFontCache) {
        self.document = document
        self.page = page
        self.fonts = fonts
        collector = WordCollector(cropBox: page.cropBox)
    }

    /// Reads the page's `/Contents` (one stream or an array of them, read as one).
    mutating func run() throws(PDFError) {
        let contents = document.resolve(page.dictionary["Contents"] ?? .null)
        let streams = contents.arrayValue.map { $0.map(document.resolve) } ?? [contents]
        var bytes: [UInt8] = []
        for stream in streams.compactMap(\.streamValue) {
            bytes += try decoded(stream, what: "a content stream")
            bytes.append(0x0A)
        }
        let resources = document.resolve(page.dictionary["Resources"] ?? .null).dictionaryValue ?? PDFDictionary()
        execute(bytes, resources: resources, depth: 0)
    }

    /// A stream's data; a stream that cannot be decoded is skipped with a warning, but an
    /// exhausted decode budget ends the work.
    private mutating func decoded(_ stream: PDFStream, what: String) throws(PDFError) -> [UInt8] {
        do {
            return Array(try document.decodedData(of: stream))
        } catch {
            if error.code == .limitExceeded { throw error }
            warnings.append("\(what) could not be decoded (\(error.message)); its text is left out")
            return []
        }
    }

    private mutating func execute(_ bytes: [UInt8], resources: PDFDictionary, depth: Int) {
        var reader = ContentStreamReader(bytes)
        while let operation = reader.next() {
            operations += 1
            guard operations <= Self.maximumOperations, characters <= Self.maximumCharacters else {
                if operations == Self.maximumOperations + 1 || characters == Self.maximumCharacters + 1 {
                    warnings.append(
                        "the page has more than \(Self.maximumOperations) operators or \(Self.maximumCharacters) "
                            + "characters; the text after them is left out")
                }
                operations = Self.maximumOperations + 2
                characters = Self.maximumCharacters + 2
                return
            }
            apply(operation, resources: resources, depth: depth)
        }
    }

    private mutating func apply(_ operation: ContentOperation, resources: PDFDictionary, depth: Int) {
        let operands = operation.operands
        switch operation.name {
        case "q":
            if stack.count < Self.maximumStateDepth { stack.append(state) }
        case "Q":
            if let saved = stack.popLast() { state = saved }
        case "cm":
            if let matrix = AffineTransform(operands.compactMap(\.doubleValue)) { state.ctm = matrix.then(state.ctm) }
        case "BT":
            textMatrix = .identity
            lineMatrix = .identity
        case "Tf":
            if operands.count >= 2, let name = operands[0].nameValue, let size = operation.number(1) {
                state.font = font(named: name, resources: resources)
                state.fontSize = size
            }
        case "Tc": state.characterSpacing = operation.number(0) ?? state.characterSpacing
        case "Tw": state.wordSpacing = operation.number(0) ?? state.wordSpacing
        case "Tz": state.horizontalScaling = (operation.number(0) ?? state.horizontalScaling * 100) / 100
        case "TL": state.leading = operation.number(0) ?? state.leading
        case "Ts": state.rise = operation.number(0) ?? state.rise
        case "Td", "TD":
            guard let x = operation.number(0), let y = operation.number(1) else { return }
            if operation.name == "TD" { state.leading = -y }
            moveToNextLine(x, y)
        case "Tm":
            guard let matrix = AffineTransform(operands.compactMap(\.doubleValue)) else { return }
            textMatrix = matrix
            lineMatrix = matrix
        case "T*":
            moveToNextLine(0, -state.leading)
        case "Tj":
            if let string = operands.last?.stringData { show(Array(string)) }
        case "'":
            moveToNextLine(0, -state.leading)
            if let string = operands.last?.stringData { show(Array(string)) }
        case "\"":
            if operands.count >= 3, let wordSpacing = operation.number(0), let characterSpacing = operation.number(1) {
                state.wordSpacing = wordSpacing
                state.characterSpacing = characterSpacing
            }
            moveToNextLine(0, -state.leading)
            if let string = operands.last?.stringData { show(Array(string)) }
        case "TJ":
            for item in operands.last?.arrayValue ?? [] {
                if let string = item.stringData {
                    show(Array(string))
                } else if let adjustment = item.doubleValue, adjustment.isFinite {
                    let distance = -adjustment / 1000 * state.fontSize
                    let isVertical = state.font?.isVertical == true
                    textMatrix = AffineTransform.translation(
                        isVertical ? 0 : distance * state.horizontalScaling, isVertical ? distance : 0
                    ).then(textMatrix)
                }
            }
        case "Do":
            if let name = operands.last?.nameValue { drawForm(named: name, resources: resources, depth: depth) }
        default:
            break
        }
    }

    private mutating func moveToNextLine(_ x: Double, _ y: Double) {
        lineMatrix = AffineTransform.translation(x, y).then(lineMatrix)
        textMatrix = lineMatrix
    }

    private mutating func font(named name: String, resources: PDFDictionary) -> TextFont? {
        let fontResources = document.resolve(resources["Font"] ?? .null).dictionaryValue
        guard let entry = fontResources?[name] else {
            warnings.append("the font /\(name) is not in the page's resources; its text is left out")
            return nil
        }
        return fonts.font(entry, in: document)
    }

    /// Enters a form XObject: its `/Matrix` on top of the current transformation, its own
    /// resources (or the current ones), its content; the state is restored afterwards.
    private mutating func drawForm(named name: String, resources: PDFDictionary, depth: Int) {
        let entry = document.resolve(resources["XObject"] ?? .null).dictionaryValue?[name]
        guard let entry, let stream = document.resolve(entry).streamValue,
            stream.dictionary["Subtype"]?.nameValue == "Form", depth < Self.maximumFormDepth
        else { return }
        let number = entry.referenceValue?.number
        if let number {
            guard !formAncestors.contains(number) else { return }
            formAncestors.insert(number)
        }
        defer { if let number { formAncestors.remove(number) } }
        guard let bytes = try? decoded(stream, what: "the form /\(name)") else { return }
        let saved = (state, stack.count, textMatrix, lineMatrix)
        let matrix = stream.dictionary["Matrix"].map(document.resolve)?.arrayValue?
            .compactMap { document.resolve($0).doubleValue }
        if let matrix = matrix.flatMap(AffineTransform.init) { state.ctm = matrix.then(state.ctm) }
        let formResources = stream.dictionary["Resources"].map(document.resolve)?.dictionaryValue ?? resources
        execute(bytes, resources: formResources, depth: depth + 1)
        (state, textMatrix, lineMatrix) = (saved.0, saved.2, saved.3)
        stack.removeLast(max(0, stack.count - saved.1))
    }

    /// Shows a string: each character is placed and handed to the collector, and the text
    /// matrix advances past it.
    private mutating func show(_ bytes: [UInt8]) {
        guard let font = state.font else { return }
        let size = state.fontSize
        let scaling = state.horizontalScaling
        for glyph in font.glyphs(bytes) {
            characters += 1
            if characters > Self.maximumCharacters { return }
            let rendering = AffineTransform(a: size * scaling, b: 0, c: 0, d: size, e: 0, f: state.rise)
                .then(textMatrix).then(state.ctm)
            let spacing = state.characterSpacing + (glyph.takesWordSpacing ? state.wordSpacing : 0)
            collector.add(glyph.text, rendering: rendering, width: glyph.width, font: font)
            let advance =
                font.isVertical
                ? AffineTransform.translation(0, -glyph.width * size + spacing)
                : AffineTransform.translation((glyph.width * size + spacing) * scaling, 0)
            textMatrix = advance.then(textMatrix)
        }
    }
}

/// The fonts of one extraction, loaded once per font object.
final class TextFontCache {
    private var fonts: [Int: TextFont] = [:]
    /// The most fonts kept; more are loaded each time they are used.
    static let capacity = 4_096

    func font(_ entry: PDFObject, in document: PDFDocument) -> TextFont? {
        if let number = entry.referenceValue?.number, let font = fonts[number] { return font }
        guard let dictionary = document.resolve(entry).dictionaryValue else { return nil }
        let font = TextFont(dictionary, in: document)
        if let number = entry.referenceValue?.number, fonts.count < Self.capacity { fonts[number] = font }
        return font
    }
}
