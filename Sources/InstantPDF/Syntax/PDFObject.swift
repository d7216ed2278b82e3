import Foundation

/// A reference to an indirect object: `12 0 R`.
public struct PDFReference: Hashable, Sendable, CustomStringConvertible {
    public var number: Int
    public var generation: Int

    public init(number: Int, generation: Int) {
        self.number = number
        self.generation = generation
    }

    public var description: String { "\(number) \(generation) R" }
}

/// A PDF object (ISO 32000-1, 7.3).
public enum PDFObject: Hashable, Sendable {
    case null
    case bool(Bool)
    case integer(Int)
    case real(Double)
    /// A literal or hexadecimal string, as bytes (after escapes, before any text decoding).
    case string(Data)
    /// A name without its slash, `#xx` escapes decoded.
    case name(String)
    case array([PDFObject])
    case dictionary(PDFDictionary)
    case stream(PDFStream)
    case reference(PDFReference)

    public var intValue: Int? {
        switch self {
        case .integer(let value): return value
        case .real(let value) where value.isFinite && abs(value) < 1e15: return Int(value)
        default: return nil
        }
    }

    public var doubleValue: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .real(let value): return value
        default: return nil
        }
    }

    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    public var nameValue: String? {
        if case .name(let value) = self { return value }
        return nil
    }

    public var stringData: Data? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The string as text: UTF-16 with a byte order mark, UTF-8 with one, or PDFDocEncoding.
    public var textValue: String? { stringData.map(PDFText.decode) }

    public var arrayValue: [PDFObject]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The dictionary of a dictionary or of a stream.
    public var dictionaryValue: PDFDictionary? {
        switch self {
        case .dictionary(let value): return value
        case .stream(let stream): return stream.dictionary
        default: return nil
        }
    }

    public var streamValue: PDFStream? {
        if case .stream(let value) = self { return value }
        return nil
    }

    public var referenceValue: PDFReference? {
        if case .reference(let value) = self { return value }
        return nil
    }
}

/// A PDF dictionary: names to objects.
public struct PDFDictionary: Hashable, Sendable {
    public var entries: [String: PDFObject]

    public init(_ entries: [String: PDFObject] = [:]) { self.entries = entries }

    public subscript(key: String) -> PDFObject? {
        get { entries[key] }
        set { entries[key] = newValue }
    }

    /// The `/Type` name.
    public var type: String? { entries["Type"]?.nameValue }
}

/// A stream: its dictionary and its bytes as stored in the file (still encoded, and encrypted if the
/// file is).
public struct PDFStream: Hashable, Sendable {
    public var dictionary: PDFDictionary
    public var rawData: Data

    public init(dictionary: PDFDictionary, rawData: Data) {
        self.dictionary = dictionary
        self.rawData = rawData
    }
}

/// Text of PDF strings.
enum PDFText {
    static func decode(_ data: Data) -> String {
        let bytes = [UInt8](data)
        if bytes.count >= 2, bytes[0] == 0xFE, bytes[1] == 0xFF {
            var units: [UInt16] = []
            var index = 2
            while index + 1 < bytes.count {
                units.append(UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]))
                index += 2
            }
            return String(decoding: units, as: UTF16.self)
        }
        if bytes.count >= 2, bytes[0] == 0xFF, bytes[1] == 0xFE {
            var units: [UInt16] = []
            var index = 2
            while index + 1 < bytes.count {
                units.append(UInt16(bytes[index + 1]) << 8 | UInt16(bytes[index]))
                index += 2
            }
            return String(decoding: units, as: UTF16.self)
        }
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            return String(decoding: bytes[3...], as: UTF8.self)
        }
        return String(String.UnicodeScalarView(bytes.map { pdfDocEncoding($0) }))
    }

    /// PDFDocEncoding (ISO 32000-1, Annex D): Latin-1 except for 0x18–0x1F and 0x80–0x9F.
    private static func pdfDocEncoding(_ byte: UInt8) -> Unicode.Scalar {
        let high: [UInt32] = [
            0x2022, 0x2020, 0x2021, 0x2026, 0x2014, 0x2013, 0x0192, 0x2044, 0x2039, 0x203A, 0x2212, 0x2030, 0x201E,
            0x201C, 0x201D, 0x2018, 0x2019, 0x201A, 0x2122, 0xFB01, 0xFB02, 0x0141, 0x0152, 0x0160, 0x0178, 0x017D,
            0x0131, 0x0142, 0x0153, 0x0161, 0x017E, 0xFFFD,
        ]
        let low: [UInt32] = [0x02D8, 0x02C7, 0x02C6, 0x02D9, 0x02DD, 0x02DB, 0x02DA, 0x02DC]
        switch byte {
        case 0x18...0x1F: return Unicode.Scalar(low[Int(byte - 0x18)])!
        case 0x80...0x9F: return Unicode.Scalar(high[Int(byte - 0x80)])!
        case 0xA0: return "\u{20AC}"
        default: return Unicode.Scalar(byte)
        }
    }
}
