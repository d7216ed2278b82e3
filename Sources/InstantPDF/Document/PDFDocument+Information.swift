import Foundation
import InstantJSON

/// The document information dictionary (`/Info`) of a PDF, with dates as ISO 8601.
public struct PDFMetadata: Hashable, Sendable {
    public var title: String?
    public var author: String?
    public var subject: String?
    public var keywords: String?
    public var creator: String?
    public var producer: String?
    /// `/CreationDate` as ISO 8601.
    public var created: String?
    /// `/ModDate` as ISO 8601.
    public var modified: String?
}

/// What a PDF's standard security handler allows (`/P` of the encryption dictionary, ISO 32000-1,
/// table 22). A file without encryption allows everything.
public struct PDFPermissions: Hashable, Sendable {
    /// Bit 3: print.
    public var print: Bool
    /// Bit 4: change the document in other ways than the permissions below.
    public var modify: Bool
    /// Bit 5: copy or extract text and graphics.
    public var extract: Bool
    /// Bit 6: add or change annotations, fill in form fields.
    public var annotationsAndForms: Bool
    /// Bit 9: fill in form fields, even without bit 6.
    public var fillForms: Bool
    /// Bit 10: extract text and graphics for accessibility.
    public var extractForAccessibility: Bool
    /// Bit 11: insert, rotate or delete pages, create outline items and thumbnails.
    public var assemble: Bool
    /// Bit 12: print at full quality.
    public var printHighQuality: Bool

    /// The permissions of the `/P` value.
    public init(bits: Int32) {
        func isSet(_ bit: Int) -> Bool { bits & (1 << (bit - 1)) != 0 }
        print = isSet(3)
        modify = isSet(4)
        extract = isSet(5)
        annotationsAndForms = isSet(6)
        fillForms = isSet(9)
        extractForAccessibility = isSet(10)
        assemble = isSet(11)
        printHighQuality = isSet(12)
    }

    /// Every operation allowed: a file without encryption.
    public static let all = PDFPermissions(bits: -1)
}

extension PDFDocument {
    /// The document information dictionary; every member `nil` when the file has none.
    public var metadata: PDFMetadata {
        let info = resolve(trailer["Info"] ?? .null).dictionaryValue ?? PDFDictionary()
        func text(_ key: String) -> String? { resolve(info[key] ?? .null).textValue }
        return PDFMetadata(
            title: text("Title"), author: text("Author"), subject: text("Subject"), keywords: text("Keywords"),
            creator: text("Creator"), producer: text("Producer"), created: PDFValues.date(text("CreationDate")),
            modified: PDFValues.date(text("ModDate")))
    }

    /// What the file's encryption allows; ``PDFPermissions/all`` without encryption.
    public var permissions: PDFPermissions {
        guard let encryption = resolve(trailer["Encrypt"] ?? .null).dictionaryValue,
            let bits = resolve(encryption["P"] ?? .null).intValue
        else { return .all }
        return PDFPermissions(bits: Int32(truncatingIfNeeded: bits))
    }

    /// A box of a page's own dictionary (`/BleedBox`, `/TrimBox`, `/ArtBox`, …), or `nil` when the
    /// page has none or it is not a rectangle.
    public func box(_ key: String, of page: PDFPage) -> PDFRect? {
        PDFRect(page.dictionary[key] ?? .null, resolve: resolve)
    }

    /// Whether the interactive form has XFA (`/XFA` in `/AcroForm`).
    public var hasXFA: Bool {
        resolve(catalog["AcroForm"] ?? .null).dictionaryValue?["XFA"] != nil
    }

    /// The label of each page (`/PageLabels`, ISO 32000-1, 12.4.2): a prefix and a number in
    /// decimal, roman or letters; the page number from 1 where the file has no labels.
    public var pageLabels: [String] {
        var ranges: [(start: Int, style: PDFDictionary)] = []
        if let tree = resolve(catalog["PageLabels"] ?? .null).dictionaryValue {
            collectLabelRanges(tree, depth: 0, into: &ranges)
        }
        ranges.sort { $0.start < $1.start }
        return (0..<pageCount).map { index in
            guard let range = ranges.last(where: { $0.start <= index }) else { return String(index + 1) }
            let prefix = resolve(range.style["P"] ?? .null).textValue ?? ""
            let first = max(resolve(range.style["St"] ?? .null).intValue ?? 1, 1)
            let number = first + index - range.start
            switch range.style["S"]?.nameValue {
            case "D": return prefix + String(number)
            case "R": return prefix + Self.roman(number)
            case "r": return prefix + Self.roman(number).lowercased()
            case "A": return prefix + Self.letters(number)
            case "a": return prefix + Self.letters(number).lowercased()
            default: return prefix
            }
        }
    }

    /// The `/Nums` pairs of a number tree node and its kids, at most 32 levels and 100,000 ranges.
    private func collectLabelRanges(
        _ node: PDFDictionary, depth: Int, into ranges: inout [(start: Int, style: PDFDictionary)]
    ) {
        guard depth < 32 else { return }
        let numbers = resolve(node["Nums"] ?? .null).arrayValue ?? []
        for index in stride(from: 0, to: numbers.count - 1, by: 2) where ranges.count < 100_000 {
            guard let start = resolve(numbers[index]).intValue, start >= 0,
                let style = resolve(numbers[index + 1]).dictionaryValue
            else { continue }
            ranges.append((start, style))
        }
        for kid in resolve(node["Kids"] ?? .null).arrayValue ?? [] {
            if let child = resolve(kid).dictionaryValue { collectLabelRanges(child, depth: depth + 1, into: &ranges) }
        }
    }

    /// Upper-case roman numerals (numbers past 4,999 in decimal, as no reader writes them).
    static func roman(_ number: Int) -> String {
        guard number < 5_000 else { return String(number) }
        let symbols: [(Int, String)] = [
            (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"),
            (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
        ]
        var rest = number
        var text = ""
        for (value, symbol) in symbols {
            while rest >= value {
                text += symbol
                rest -= value
            }
        }
        return text
    }

    /// Letters as PDF numbers pages with them: A to Z, then AA to ZZ, then AAA… (at most 1,000 letters).
    static func letters(_ number: Int) -> String {
        let letter = Character(Unicode.Scalar(UInt8(ascii: "A") + UInt8((number - 1) % 26)))
        return String(repeating: letter, count: min((number - 1) / 26 + 1, 1_000))
    }
}
