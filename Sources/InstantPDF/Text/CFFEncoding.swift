/// Reads the encoding built into a CFF font program (`/FontFile3` of subtype `Type1C`; Adobe
/// Technical Note #5176): which glyph name each one-byte code shows, for fonts whose dictionary
/// names no base encoding, as TeX's fonts are embedded.
///
/// Only what the encoding needs is read (the header, the Top DICT, the string INDEX, the charset
/// and the encoding); every offset and count is checked against the data, so a damaged program
/// gives `nil`, never a crash.
enum CFFEncoding {
    private static let standardStrings = EncodingTables.cffStandardStrings.split(whereSeparator: \.isWhitespace)
        .map(String.init)

    /// `(code, glyph name)` pairs; `nil` for a CID-keyed program, one using the standard or
    /// expert encoding, or one that cannot be read.
    static func entries(_ data: [UInt8]) -> [(Int, String)]? {
        var reader = Reader(data: data)
        guard data.count > 4 else { return nil }
        reader.offset = Int(data[2])
        guard reader.skipIndex(), let topDicts = reader.index(), let top = topDicts.first,
            let strings = reader.index()
        else { return nil }
        let dictionary = topDictionary(top)
        guard dictionary.isCIDKeyed == false, let charStrings = dictionary.charStrings, dictionary.encoding > 1 else {
            return nil
        }
        var glyphs = Reader(data: data, offset: charStrings)
        guard let glyphCount = glyphs.card16(), glyphCount > 0 else { return nil }
        let names = charset(data, at: dictionary.charset, glyphCount: glyphCount, strings: strings)
        return encoding(data, at: dictionary.encoding, names: names, strings: strings)
    }

    private struct TopDictionary {
        var charset = 0
        var encoding = 0
        var charStrings: Int?
        var isCIDKeyed = false
    }

    /// The Top DICT's charset (15), Encoding (16) and CharStrings (17) offsets, and whether it
    /// has ROS (12 30), which makes the program CID-keyed.
    private static func topDictionary(_ bytes: ArraySlice<UInt8>) -> TopDictionary {
        var result = TopDictionary()
        var operands: [Double] = []
        var index = bytes.startIndex
        func byte(_ at: Int) -> Int { at < bytes.endIndex ? Int(bytes[at]) : 0 }
        while index < bytes.endIndex {
            let b0 = Int(bytes[index])
            switch b0 {
            case 32...246:
                operands.append(Double(b0 - 139))
                index += 1
            case 247...250:
                operands.append(Double((b0 - 247) * 256 + byte(index + 1) + 108))
                index += 2
            case 251...254:
                operands.append(Double(-(b0 - 251) * 256 - byte(index + 1) - 108))
                index += 2
            case 28:
                operands.append(Double(Int16(bitPattern: UInt16(byte(index + 1) << 8 | byte(index + 2)))))
                index += 3
            case 29:
                let value = (byte(index + 1) << 24) | (byte(index + 2) << 16) | (byte(index + 3) << 8) | byte(index + 4)
                operands.append(Double(Int32(truncatingIfNeeded: value)))
                index += 5
            case 30:
                // A real number in nibbles, ended by the nibble 0xF; its value is not needed here.
                index += 1
                while index < bytes.endIndex, bytes[index] & 0x0F != 0x0F, bytes[index] >> 4 != 0x0F { index += 1 }
                index += 1
                operands.append(0)
            default:
                let last = operands.last.map { Int($0) }
                if b0 == 12 {
                    if byte(index + 1) == 30 { result.isCIDKeyed = true }
                    index += 2
                } else {
                    switch b0 {
                    case 15: result.charset = last ?? 0
                    case 16: result.encoding = last ?? 0
                    case 17: result.charStrings = last
                    default: break
                    }
                    index += 1
                }
                operands.removeAll()
            }
        }
        return result
    }

    /// The glyph name of each glyph: glyph 0 is `.notdef`, the others come from the charset
    /// (the predefined ISOAdobe charset when its offset is 0).
    private static func charset(_ data: [UInt8], at offset: Int, glyphCount: Int, strings: [ArraySlice<UInt8>])
        -> [String]
    {
        var names = [".notdef"]
        func name(_ sid: Int) -> String {
            if sid < standardStrings.count { return standardStrings[sid] }
            let index = sid - standardStrings.count
            return index < strings.count ? String(decoding: strings[index], as: UTF8.self) : ""
        }
        guard offset > 2 else {
            for glyph in 1..<min(glyphCount, 229) { names.append(name(glyph)) }
            return names
        }
        var reader = Reader(data: data, offset: offset)
        guard let format = reader.card8() else { return names }
        while names.count < glyphCount {
            switch format {
            case 0:
                guard let sid = reader.card16() else { return names }
                names.append(name(sid))
            case 1, 2:
                guard let first = reader.card16(), let left = format == 1 ? reader.card8() : reader.card16() else {
                    return names
                }
                for sid in first...(first + left) where names.count < glyphCount { names.append(name(sid)) }
            default:
                return names
            }
        }
        return names
    }

    /// The codes of the glyphs: format 0 lists a code per glyph, format 1 ranges of codes, and
    /// the high bit adds supplements (more codes for named glyphs).
    private static func encoding(_ data: [UInt8], at offset: Int, names: [String], strings: [ArraySlice<UInt8>])
        -> [(Int, String)]?
    {
        var reader = Reader(data: data, offset: offset)
        guard let format = reader.card8() else { return nil }
        var entries: [(Int, String)] = []
        var glyph = 1
        switch format & 0x7F {
        case 0:
            guard let count = reader.card8() else { return nil }
            for _ in 0..<count {
                guard let code = reader.card8() else { break }
                if glyph < names.count { entries.append((code, names[glyph])) }
                glyph += 1
            }
        case 1:
            guard let ranges = reader.card8() else { return nil }
            for _ in 0..<ranges {
                guard let first = reader.card8(), let left = reader.card8() else { break }
                for code in first...min(first + left, 255) {
                    if glyph < names.count { entries.append((code, names[glyph])) }
                    glyph += 1
                }
            }
        default:
            return nil
        }
        if format & 0x80 != 0, let supplements = reader.card8() {
            for _ in 0..<supplements {
                guard let code = reader.card8(), let sid = reader.card16() else { break }
                let name =
                    sid < standardStrings.count
                    ? standardStrings[sid]
                    : (sid - standardStrings.count < strings.count
                        ? String(decoding: strings[sid - standardStrings.count], as: UTF8.self) : "")
                entries.append((code, name))
            }
        }
        return entries
    }

    /// Reads big-endian numbers and INDEXes, with every read checked against the data.
    private struct Reader {
        let data: [UInt8]
        var offset = 0

        mutating func card8() -> Int? {
            guard offset >= 0, offset < data.count else { return nil }
            defer { offset += 1 }
            return Int(data[offset])
        }

        mutating func card16() -> Int? {
            guard let high = card8(), let low = card8() else { return nil }
            return high << 8 | low
        }

        mutating func offsetValue(size: Int) -> Int? {
            var value = 0
            for _ in 0..<size {
                guard let byte = card8() else { return nil }
                value = value << 8 | byte
            }
            return value
        }

        /// An INDEX: its items as slices of the data.
        mutating func index() -> [ArraySlice<UInt8>]? {
            guard let count = card16() else { return nil }
            guard count > 0 else { return [] }
            guard let size = card8(), (1...4).contains(size), count < data.count else { return nil }
            var offsets: [Int] = []
            for _ in 0...count {
                guard let value = offsetValue(size: size) else { return nil }
                offsets.append(value)
            }
            let base = offset - 1
            guard let last = offsets.last, base + last <= data.count else { return nil }
            offset = base + last
            var items: [ArraySlice<UInt8>] = []
            for (start, end) in zip(offsets, offsets.dropFirst()) {
                guard start >= 1, start <= end else { return nil }
                items.append(data[(base + start)..<(base + end)])
            }
            return items
        }

        mutating func skipIndex() -> Bool { index() != nil }
    }
}
