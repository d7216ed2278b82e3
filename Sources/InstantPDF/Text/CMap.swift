import Foundation

/// A CMap (ISO 32000-1, 9.7.5 and 9.10.3): how the bytes of a string split into character codes,
/// and what each code maps to: a CID (a font's encoding) or text (its `/ToUnicode`).
///
/// CMaps come from the file, so everything is bounded: at most ``maximumEntries`` mappings, and
/// ranges are kept as ranges, never expanded.
struct CMap {
    /// The most mappings (single codes and ranges) read from one CMap.
    static let maximumEntries = 100_000

    /// A range of codes of one byte length.
    struct CodeRange {
        var low: UInt32
        var high: UInt32
        var byteCount: Int
    }

    /// Codes `low...high` mapping to consecutive values from `start`, or to the texts of `texts`.
    struct Mapping {
        var low: UInt32
        var high: UInt32
        var start: UInt32
        var texts: [String]?
        /// The text of `start`, whose last UTF-16 unit is incremented along the range.
        var baseText: [UInt16]
    }

    private(set) var codespaces: [CodeRange] = []
    private(set) var isVertical = false
    private var singleCIDs: [UInt32: Int] = [:]
    private var singleTexts: [UInt32: String] = [:]
    private var ranges: [Mapping] = []

    private init() {}

    /// The predefined identity CMap (`Identity-H` or `Identity-V`): two-byte codes, CID = code.
    static func identity(vertical: Bool) -> CMap {
        var map = CMap()
        map.codespaces = [CodeRange(low: 0, high: 0xFFFF, byteCount: 2)]
        map.ranges = [Mapping(low: 0, high: 0xFFFF, start: 0, texts: nil, baseText: [])]
        map.isVertical = vertical
        return map
    }

    /// Reads a CMap stream's text. Unknown operators are ignored; `usecmap` of a predefined
    /// CMap is not followed.
    init(parsing bytes: [UInt8]) {
        var reader = ContentStreamReader(bytes, maximumOperands: ContentStreamReader.maximumCMapOperands)
        var entries = 0
        while let operation = reader.next(), entries < Self.maximumEntries {
            let operands = operation.operands
            switch operation.name {
            case "endcodespacerange":
                for pair in stride(from: 0, to: operands.count - 1, by: 2) {
                    guard let low = operands[pair].stringData, let high = operands[pair + 1].stringData,
                        low.count == high.count, (1...4).contains(low.count)
                    else { continue }
                    codespaces.append(CodeRange(low: Self.code(low), high: Self.code(high), byteCount: low.count))
                }
            case "endbfchar":
                for pair in stride(from: 0, to: operands.count - 1, by: 2) {
                    guard let source = operands[pair].stringData, source.count <= 4,
                        let text = Self.text(operands[pair + 1])
                    else { continue }
                    singleTexts[Self.code(source)] = text
                    entries += 1
                }
            case "endbfrange":
                for triple in stride(from: 0, to: operands.count - 2, by: 3) {
                    guard let low = operands[triple].stringData, let high = operands[triple + 1].stringData,
                        low.count <= 4, high.count <= 4, Self.code(low) <= Self.code(high)
                    else { continue }
                    let destination = operands[triple + 2]
                    if let items = destination.arrayValue {
                        ranges.append(
                            Mapping(
                                low: Self.code(low), high: Self.code(high), start: 0,
                                texts: items.map { Self.text($0) ?? "" }, baseText: []))
                    } else if let data = destination.stringData {
                        ranges.append(
                            Mapping(
                                low: Self.code(low), high: Self.code(high), start: 0, texts: nil,
                                baseText: Self.utf16Units(data)))
                    }
                    entries += 1
                }
            case "endcidchar":
                for pair in stride(from: 0, to: operands.count - 1, by: 2) {
                    guard let source = operands[pair].stringData, source.count <= 4,
                        let cid = operands[pair + 1].intValue, cid >= 0
                    else { continue }
                    singleCIDs[Self.code(source)] = cid
                    entries += 1
                }
            case "endcidrange":
                for triple in stride(from: 0, to: operands.count - 2, by: 3) {
                    guard let low = operands[triple].stringData, let high = operands[triple + 1].stringData,
                        low.count <= 4, high.count <= 4, Self.code(low) <= Self.code(high),
                        let cid = operands[triple + 2].intValue, cid >= 0, cid <= Int(UInt32.max)
                    else { continue }
                    ranges.append(
                        Mapping(
                            low: Self.code(low), high: Self.code(high), start: UInt32(cid), texts: nil, baseText: []))
                    entries += 1
                }
            case "def":
                if operands.count >= 2, operands[operands.count - 2].nameValue == "WMode" {
                    isVertical = operands.last?.intValue == 1
                }
            default:
                break
            }
        }
        ranges.sort { $0.low < $1.low }
    }

    /// The next code of `bytes` from `index`, and its length: the shortest prefix inside a
    /// codespace range; one byte when none matches (two for a CMap that has no codespace and
    /// `twoByteDefault`).
    func code(in bytes: [UInt8], at index: Int, twoByteDefault: Bool = false) -> (code: UInt32, byteCount: Int) {
        var value: UInt32 = 0
        for length in 1...4 where index + length <= bytes.count {
            value = value << 8 | UInt32(bytes[index + length - 1])
            if codespaces.contains(where: { $0.byteCount == length && $0.low <= value && value <= $0.high }) {
                return (value, length)
            }
        }
        let length =
            codespaces.isEmpty
            ? (twoByteDefault ? 2 : 1) : codespaces.map(\.byteCount).min() ?? 1
        let count = min(length, bytes.count - index)
        return (bytes[index..<index + count].reduce(0) { $0 << 8 | UInt32($1) }, max(count, 1))
    }

    /// The CID of a code (a font encoding's mapping); `nil` when the CMap does not map it.
    func cid(_ code: UInt32) -> Int? {
        if let cid = singleCIDs[code] { return cid }
        guard let range = range(containing: code) else { return nil }
        return Int(range.start + (code - range.low))
    }

    /// The text of a code (a `/ToUnicode` mapping); `nil` when the CMap does not map it.
    func text(_ code: UInt32) -> String? {
        if let text = singleTexts[code] { return text }
        guard let range = range(containing: code) else { return nil }
        let offset = Int(code - range.low)
        if let texts = range.texts { return offset < texts.count ? texts[offset] : nil }
        guard var units = range.baseText.isEmpty ? nil : range.baseText else { return nil }
        units[units.count - 1] &+= UInt16(truncatingIfNeeded: offset)
        return String(decoding: units, as: UTF16.self)
    }

    /// The range holding `code`, by binary search over the ranges sorted by their first code
    /// (the last one starting at or before it).
    private func range(containing code: UInt32) -> Mapping? {
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].low <= code { low = middle + 1 } else { high = middle }
        }
        var index = low - 1
        // Ranges may overlap; look back over the few that start before `code`.
        while index >= 0, index >= low - 8 {
            if ranges[index].high >= code { return ranges[index] }
            index -= 1
        }
        return nil
    }

    private static func code(_ data: Data) -> UInt32 { data.prefix(4).reduce(0) { $0 << 8 | UInt32($1) } }

    private static func utf16Units(_ data: Data) -> [UInt16] {
        let bytes = Array(data)
        return stride(from: 0, to: bytes.count - 1, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
    }

    /// A destination of `bfchar`: UTF-16BE text, or a glyph name.
    private static func text(_ object: PDFObject) -> String? {
        if let data = object.stringData {
            if data.count == 1 { return String(UnicodeScalar(data[data.startIndex])) }
            return String(decoding: utf16Units(data), as: UTF16.self)
        }
        if let name = object.nameValue { return GlyphNames.text(name) }
        return nil
    }
}
