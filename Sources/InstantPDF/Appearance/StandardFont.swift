import Foundation

/// The standard 14 fonts that appearance streams use (every viewer has them, so nothing is
/// embedded), with the glyph widths of their AFM metrics for the printable ASCII range.
enum StandardFont: String, CaseIterable {
    case helvetica = "Helvetica"
    case helveticaBold = "Helvetica-Bold"
    case timesRoman = "Times-Roman"
    case courier = "Courier"

    /// The font of an Instant JSON `font` name: Times and Courier by their family, Helvetica otherwise.
    init(instantFont name: String?) {
        let lowered = (name ?? "").lowercased()
        if lowered.contains("times") {
            self = .timesRoman
        } else if lowered.contains("courier") {
            self = .courier
        } else {
            self = .helvetica
        }
    }

    /// The resource name the content streams use for the font.
    var resourceName: String {
        switch self {
        case .helvetica: "Helv"
        case .helveticaBold: "HeBo"
        case .timesRoman: "TiRo"
        case .courier: "Cour"
        }
    }

    /// The font dictionary: a standard Type 1 font in WinAnsiEncoding.
    var dictionary: PDFDictionary {
        PDFDictionary([
            "Type": .name("Font"), "Subtype": .name("Type1"), "BaseFont": .name(rawValue),
            "Encoding": .name("WinAnsiEncoding"),
        ])
    }

    /// The width of a text at a size, in points.
    func width(of text: String, size: Double) -> Double {
        Double(Self.winAnsiBytes(text).reduce(0) { $0 + glyphWidth($1) }) * size / 1000
    }

    /// The width of a WinAnsi byte in thousandths of the font size; bytes outside printable ASCII
    /// (accented letters and the like) use the width of a typical lowercase letter.
    func glyphWidth(_ byte: UInt8) -> Int {
        guard self != .courier else { return 600 }
        guard byte >= 0x20, byte < 0x7F else { return self == .timesRoman ? 500 : 556 }
        let table =
            switch self {
            case .helvetica: Self.helveticaWidths
            case .helveticaBold: Self.helveticaBoldWidths
            default: Self.timesWidths
            }
        return table[Int(byte) - 0x20]
    }

    // Widths of the characters 0x20 (space) to 0x7E (~), from the fonts' AFM files.
    private static let helveticaWidths = [
        278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556, 556, 556, 556,
        556, 556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667,
        556, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556, 333, 556,
        556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722,
        500, 500, 500, 334, 260, 334, 584,
    ]
    private static let helveticaBoldWidths = [
        278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556, 556, 556, 556,
        556, 556, 556, 556, 333, 333, 584, 584, 584, 611, 975, 722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722,
        611, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333, 584, 556, 333, 556,
        611, 556, 611, 556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611, 611, 611, 389, 556, 333, 611, 556, 778,
        556, 556, 500, 389, 280, 389, 584,
    ]
    private static let timesWidths = [
        250, 333, 408, 500, 500, 833, 778, 180, 333, 333, 500, 564, 250, 333, 250, 278, 500, 500, 500, 500, 500, 500,
        500, 500, 500, 500, 278, 278, 564, 564, 564, 444, 921, 722, 667, 667, 722, 611, 556, 722, 722, 333, 389, 722,
        611, 889, 722, 722, 556, 722, 667, 556, 611, 722, 722, 944, 722, 722, 611, 333, 278, 333, 469, 500, 333, 444,
        500, 444, 500, 444, 333, 500, 500, 278, 278, 500, 278, 778, 500, 500, 500, 500, 333, 389, 278, 500, 500, 722,
        500, 500, 444, 480, 200, 480, 541,
    ]

    /// Text in WinAnsiEncoding (ISO 32000-1, D.2): Latin-1 plus the typographic characters of
    /// 0x80–0x9F; anything else becomes `?`.
    static func winAnsiBytes(_ text: String) -> [UInt8] {
        text.unicodeScalars.map { scalar in
            let value = scalar.value
            if value < 0x80 || (0xA0...0xFF).contains(value) { return UInt8(value) }
            return windows1252[value] ?? UInt8(ascii: "?")
        }
    }

    private static let windows1252: [UInt32: UInt8] = [
        0x20AC: 0x80, 0x201A: 0x82, 0x0192: 0x83, 0x201E: 0x84, 0x2026: 0x85, 0x2020: 0x86, 0x2021: 0x87,
        0x02C6: 0x88, 0x2030: 0x89, 0x0160: 0x8A, 0x2039: 0x8B, 0x0152: 0x8C, 0x017D: 0x8E, 0x2018: 0x91,
        0x2019: 0x92, 0x201C: 0x93, 0x201D: 0x94, 0x2022: 0x95, 0x2013: 0x96, 0x2014: 0x97, 0x02DC: 0x98,
        0x2122: 0x99, 0x0161: 0x9A, 0x203A: 0x9B, 0x0153: 0x9C, 0x017E: 0x9E, 0x0178: 0x9F,
    ]
}
