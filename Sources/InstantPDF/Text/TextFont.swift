import Foundation

/// A font as reading text needs it (ISO 32000-1, 9.5–9.10): how a string's bytes split into
/// codes, the text of each code, its advance width, and the font's ascent and descent.
struct TextFont {
    /// One shown character.
    struct Glyph {
        /// Its text; `nil` when the font does not say (no `/ToUnicode` and no usable encoding).
        var text: String?
        /// The advance in text space units at font size 1.
        var width: Double
        /// Whether word spacing (`Tw`) applies: the single-byte code 32.
        var takesWordSpacing: Bool
    }

    private enum Codes {
        /// One byte per code, with the text and width of each of the 256 codes.
        case simple(texts: [String?], widths: [Double])
        /// Codes by a CMap, widths by CID, text by `/ToUnicode` or, for the `Uni…-UCS2` and
        /// `…-UTF16` encodings, by the code itself.
        case composite(encoding: CMap, codesAreUnicode: Bool, widths: CIDWidths)
    }

    private let codes: Codes
    private let toUnicode: CMap?
    /// Whether a composite font's CIDs are of one of Adobe's character collections, whose CIDs
    /// are not Unicode; without `/ToUnicode`, the codes of other composite fonts are read as
    /// Unicode, as other readers do.
    private let hasKnownCollection: Bool
    /// The top of the glyphs above the baseline, at font size 1.
    let ascent: Double
    /// The bottom of the glyphs below the baseline, at font size 1 (negative).
    let descent: Double
    /// Whether the font writes top to bottom (`Identity-V` and other vertical CMaps).
    let isVertical: Bool

    /// Reads a font dictionary. Every entry is checked; what is missing or broken falls back to
    /// the defaults other readers use, so a font never fails to load.
    init(_ font: PDFDictionary, in document: PDFDocument) {
        let resolve = document.resolve
        let subtype = font["Subtype"].map(resolve)?.nameValue
        let baseFont = font["BaseFont"].map(resolve)?.nameValue ?? ""
        toUnicode = font["ToUnicode"].map(resolve)?.streamValue.flatMap {
            (try? document.decodedData(of: $0)).map { CMap(parsing: Array($0)) }
        }
        if subtype == "Type0" {
            let descendant =
                font["DescendantFonts"].map(resolve)?.arrayValue?.first.map(resolve)?.dictionaryValue ?? PDFDictionary()
            let encoding = Self.compositeEncoding(font["Encoding"].map(resolve), document: document)
            codes = .composite(
                encoding: encoding.map, codesAreUnicode: encoding.codesAreUnicode,
                widths: CIDWidths(descendant, resolve: resolve))
            isVertical = encoding.map.isVertical
            let info = descendant["CIDSystemInfo"].map(resolve)?.dictionaryValue
            let ordering = info?["Ordering"].map(resolve)?.textValue ?? ""
            hasKnownCollection = ["Japan1", "GB1", "CNS1", "Korea1", "KR"].contains(ordering)
            let metrics = Self.metrics(descendant, baseFont: baseFont, resolve: resolve)
            (ascent, descent) = (metrics.ascent, metrics.descent)
        } else {
            let scale: Double
            if subtype == "Type3" {
                let matrix = font["FontMatrix"].map(resolve)?.arrayValue?.compactMap { resolve($0).doubleValue }
                scale = matrix?.count == 6 && matrix![0].isFinite && matrix![0] != 0 ? abs(matrix![0]) : 0.001
            } else {
                scale = 0.001
            }
            let texts = Self.simpleTexts(font, subtype: subtype, baseFont: baseFont, document: document)
            codes = .simple(
                texts: texts, widths: Self.simpleWidths(font, baseFont: baseFont, scale: scale, resolve: resolve))
            isVertical = false
            hasKnownCollection = false
            let metrics = Self.metrics(font, baseFont: baseFont, resolve: resolve)
            (ascent, descent) = (metrics.ascent, metrics.descent)
        }
    }

    /// The characters a string shows.
    func glyphs(_ bytes: [UInt8]) -> [Glyph] {
        var glyphs: [Glyph] = []
        switch codes {
        case .simple(let texts, let widths):
            glyphs.reserveCapacity(bytes.count)
            for byte in bytes {
                let text = toUnicode?.text(UInt32(byte)) ?? texts[Int(byte)]
                glyphs.append(Glyph(text: text, width: widths[Int(byte)], takesWordSpacing: byte == 32))
            }
        case .composite(let encoding, let codesAreUnicode, let widths):
            var index = 0
            while index < bytes.count {
                let (code, length) = encoding.code(in: bytes, at: index, twoByteDefault: true)
                let cid = encoding.cid(code)
                var text = toUnicode?.text(code)
                if text == nil, codesAreUnicode || (toUnicode == nil && !hasKnownCollection), code >= 0x20,
                    let scalar = Unicode.Scalar(code)
                {
                    text = String(scalar)
                }
                glyphs.append(
                    Glyph(
                        text: text, width: isVertical ? 1 : widths.width(of: cid ?? 0),
                        takesWordSpacing: length == 1 && code == 32))
                index += length
            }
        }
        return glyphs
    }

    // MARK: - Simple fonts

    /// The text of each code: the base encoding (the named one, else the encoding built into an
    /// embedded Type 1 program, else StandardEncoding), then `/Differences`.
    private static func simpleTexts(
        _ font: PDFDictionary, subtype: String?, baseFont: String, document: PDFDocument
    ) -> [String?] {
        let resolve = document.resolve
        let encoding = font["Encoding"].map(resolve)
        var base: BaseEncoding = subtype == "TrueType" ? .winAnsi : .standard
        if let name = encoding?.nameValue ?? encoding?.dictionaryValue?["BaseEncoding"].map(resolve)?.nameValue,
            let named = BaseEncoding(rawValue: name)
        {
            base = named
        }
        var texts = (0...255).map { base.text(UInt8($0)) }
        // Without a base encoding of its own, a font starts from the encoding of its program.
        let namesBase = encoding?.nameValue != nil || encoding?.dictionaryValue?["BaseEncoding"] != nil
        if !namesBase, let builtIn = builtInEncoding(font, document: document) {
            for (code, name) in builtIn { texts[code] = GlyphNames.text(name) }
        }
        if let differences = encoding?.dictionaryValue?["Differences"].map(resolve)?.arrayValue {
            var code = 0
            for item in differences.prefix(1024) {
                let item = resolve(item)
                if let number = item.intValue {
                    code = number
                } else if let name = item.nameValue {
                    if (0...255).contains(code) { texts[code] = GlyphNames.text(name) }
                    code += 1
                }
            }
        }
        return texts
    }

    /// The encoding of an embedded Type 1 program: the `dup CODE /NAME put` entries of its
    /// clear-text part, or the encoding of a CFF program.
    private static func builtInEncoding(_ font: PDFDictionary, document: PDFDocument) -> [(Int, String)]? {
        let resolve = document.resolve
        guard let descriptor = font["FontDescriptor"].map(resolve)?.dictionaryValue else { return nil }
        if let program = descriptor["FontFile3"].map(resolve)?.streamValue,
            program.dictionary["Subtype"]?.nameValue == "Type1C", let data = try? document.decodedData(of: program)
        {
            return CFFEncoding.entries(Array(data))
        }
        guard let program = descriptor["FontFile"].map(resolve)?.streamValue,
            let data = try? document.decodedData(of: program)
        else { return nil }
        let clearLength = program.dictionary["Length1"].map(resolve)?.intValue ?? data.count
        let clear = Array(data.prefix(max(0, min(clearLength, data.count, 1 << 20))))
        var reader = ContentStreamReader(clear)
        var entries: [(Int, String)] = []
        while let operation = reader.next() {
            guard operation.name == "put", operation.operands.count >= 2,
                let code = operation.operands[operation.operands.count - 2].intValue, (0...255).contains(code),
                let name = operation.operands.last?.nameValue
            else {
                if operation.name == "eexec" { break }
                continue
            }
            entries.append((code, name))
        }
        return entries.isEmpty ? nil : entries
    }

    /// The advance of each code: `/Widths` from `/FirstChar`, `/MissingWidth` outside them, and
    /// the metrics of the standard fonts when a font has no `/Widths` at all.
    private static func simpleWidths(
        _ font: PDFDictionary, baseFont: String, scale: Double, resolve: (PDFObject) -> PDFObject
    ) -> [Double] {
        let descriptor = font["FontDescriptor"].map(resolve)?.dictionaryValue
        let missing = descriptor?["MissingWidth"].map(resolve)?.doubleValue ?? 0
        guard let widths = font["Widths"].map(resolve)?.arrayValue else {
            let standard = StandardFont(baseFontName: baseFont)
            return (0...255).map { Double(standard.glyphWidth(UInt8($0))) * 0.001 }
        }
        let first = font["FirstChar"].map(resolve)?.intValue ?? 0
        return (0...255).map { code in
            let index = code - first
            guard index >= 0, index < widths.count, let width = resolve(widths[index]).doubleValue, width.isFinite
            else { return missing.isFinite ? missing * scale : 0 }
            return width * scale
        }
    }

    // MARK: - Composite fonts

    /// The CMap of a Type 0 font's `/Encoding`: a stream, or a predefined name (identity for
    /// `Identity-H`/`-V` and for the names this reader does not have).
    private static func compositeEncoding(
        _ encoding: PDFObject?, document: PDFDocument
    ) -> (map: CMap, codesAreUnicode: Bool) {
        if let stream = encoding?.streamValue, let data = try? document.decodedData(of: stream) {
            return (CMap(parsing: Array(data)), false)
        }
        let name = encoding?.nameValue ?? "Identity-H"
        let unicode = name.hasPrefix("Uni") && (name.contains("UCS2") || name.contains("UTF16"))
        return (CMap.identity(vertical: name.hasSuffix("-V")), unicode)
    }

    // MARK: - Metrics

    /// Ascent and descent: the font descriptor's when they are sensible, else those of the
    /// standard font of the same family, else 0.95 and -0.35 of the font size.
    private static func metrics(
        _ font: PDFDictionary, baseFont: String, resolve: (PDFObject) -> PDFObject
    ) -> (ascent: Double, descent: Double) {
        var (ascent, descent) = StandardFont.verticalMetrics(baseFontName: baseFont) ?? (0.95, -0.35)
        if let descriptor = font["FontDescriptor"].map(resolve)?.dictionaryValue {
            if let value = descriptor["Ascent"].map(resolve)?.doubleValue, value.isFinite {
                let fraction = abs(value) * 0.001
                if fraction != 0, fraction < 3 { ascent = fraction }
            }
            if let value = descriptor["Descent"].map(resolve)?.doubleValue, value.isFinite {
                let fraction = -abs(value) * 0.001
                if fraction != 0, fraction > -3 { descent = fraction }
            }
        }
        return (ascent, descent)
    }
}

/// The widths of a CIDFont (ISO 32000-1, 9.7.4.3): `/W` and `/DW`, in text space units.
struct CIDWidths {
    /// The most `/W` entries read.
    static let maximumEntries = 100_000

    private var singles: [Int: Double] = [:]
    private var ranges: [(low: Int, high: Int, width: Double)] = []
    private var defaultWidth = 1.0

    init(_ font: PDFDictionary, resolve: (PDFObject) -> PDFObject) {
        if let value = font["DW"].map(resolve)?.doubleValue, value.isFinite { defaultWidth = value * 0.001 }
        let items = font["W"].map(resolve)?.arrayValue ?? []
        var index = 0
        var entries = 0
        while index + 1 < items.count, entries < Self.maximumEntries {
            guard let first = resolve(items[index]).intValue else { break }
            let next = resolve(items[index + 1])
            if let list = next.arrayValue {
                for (offset, item) in list.prefix(Self.maximumEntries).enumerated() {
                    if let width = resolve(item).doubleValue, width.isFinite { singles[first + offset] = width * 0.001 }
                }
                entries += list.count
                index += 2
            } else if let last = next.intValue, index + 2 < items.count,
                let width = resolve(items[index + 2]).doubleValue, width.isFinite
            {
                ranges.append((first, last, width * 0.001))
                entries += 1
                index += 3
            } else {
                break
            }
        }
        ranges.sort { $0.low < $1.low }
    }

    /// The width of a CID: its own, that of the range holding it, or the default.
    func width(of cid: Int) -> Double {
        if let width = singles[cid] { return width }
        // The ranges are sorted by their first CID; the one holding `cid` starts at or before it.
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].low <= cid { low = middle + 1 } else { high = middle }
        }
        if low > 0, ranges[low - 1].high >= cid { return ranges[low - 1].width }
        return defaultWidth
    }
}
