/// Unicode for glyph names, as the `/Differences` of a font's encoding name its glyphs.
enum GlyphNames {
    /// The names of ``EncodingTables/glyphNames``.
    static let table: [String: Unicode.Scalar] = {
        var table: [String: Unicode.Scalar] = [:]
        let tokens = EncodingTables.glyphNames.split(whereSeparator: \.isWhitespace)
        for index in stride(from: 0, to: tokens.count - 1, by: 2) {
            if let value = UInt32(tokens[index + 1], radix: 16), let scalar = Unicode.Scalar(value) {
                table[String(tokens[index])] = scalar
            }
        }
        return table
    }()

    /// The text of a glyph name: a listed name, `uniXXXX` (one or more code units of four hex
    /// digits), `uXXXX` to `uXXXXXX`, a name with a suffix (`a.sc`) or a ligature of names
    /// (`f_f_i`); `nil` for names without a meaning (`g12`, `.notdef`).
    static func text(_ name: String) -> String? {
        if let scalar = table[name] { return String(scalar) }
        if let dot = name.firstIndex(of: "."), dot != name.startIndex {
            return text(String(name[..<dot]))
        }
        if name.contains("_") {
            let parts = name.split(separator: "_").map { text(String($0)) }
            guard !parts.isEmpty, parts.allSatisfy({ $0 != nil }) else { return nil }
            return parts.compactMap { $0 }.joined()
        }
        if name.hasPrefix("uni"), name.count >= 7, (name.count - 3) % 4 == 0 {
            var scalars = String.UnicodeScalarView()
            var rest = name.dropFirst(3)
            while !rest.isEmpty {
                guard let value = UInt32(rest.prefix(4), radix: 16), let scalar = Unicode.Scalar(value) else {
                    return nil
                }
                scalars.append(scalar)
                rest = rest.dropFirst(4)
            }
            return String(scalars)
        }
        if name.hasPrefix("u"), (5...7).contains(name.count), let value = UInt32(name.dropFirst(), radix: 16),
            let scalar = Unicode.Scalar(value)
        {
            return String(scalar)
        }
        return nil
    }
}

/// The base encodings of simple fonts (ISO 32000-1, Annex D): the text of each one-byte code.
enum BaseEncoding: String {
    case standard = "StandardEncoding"
    case winAnsi = "WinAnsiEncoding"
    case macRoman = "MacRomanEncoding"

    /// The text of a code in this encoding; `nil` for codes without a glyph.
    func text(_ code: UInt8) -> String? {
        let value: UInt32
        switch (self, code) {
        case (.standard, 0x27): value = 0x2019
        case (.standard, 0x60): value = 0x2018
        case (_, 0x20...0x7E): value = UInt32(code)
        case (.standard, 0x80...): value = Self.standardHigh[Int(code) - 0x80]
        case (.macRoman, 0x80...): value = Self.macRomanHigh[Int(code) - 0x80]
        case (.winAnsi, 0x80...0x9F): value = Self.winAnsiC1[Int(code) - 0x80]
        case (.winAnsi, 0xA0...): value = UInt32(code)
        default: value = 0
        }
        guard value != 0, let scalar = Unicode.Scalar(value) else { return nil }
        return String(scalar)
    }

    private static func values(_ table: String) -> [UInt32] {
        table.split(whereSeparator: \.isWhitespace).map { UInt32($0, radix: 16) ?? 0 }
    }

    private static let standardHigh = values(EncodingTables.standardHigh)
    private static let macRomanHigh = values(EncodingTables.macRomanHigh)
    private static let winAnsiC1 = values(EncodingTables.winAnsiC1)
}
