/// One operator of a content stream with its operands, such as `/F1 12 Tf`.
struct ContentOperation {
    var name: String
    var operands: [PDFObject]

    /// The operand at `index` as a number; `nil` when it is missing or not a number.
    func number(_ index: Int) -> Double? {
        guard index < operands.count, let value = operands[index].doubleValue, value.isFinite else { return nil }
        return value
    }
}

/// Reads the operators of a content stream (ISO 32000-1, 7.8.2) or of a CMap, which has the same
/// syntax, one at a time.
///
/// Content streams of real files are often damaged, so reading never fails: a token that cannot
/// be read is skipped, and operands pile up to at most a maximum (older ones are dropped). Inline images (`BI … ID … EI`) are skipped whole.
struct ContentStreamReader {
    /// The most operands kept before an operator by default: no operator of a content stream
    /// takes more than a few.
    static let maximumContentOperands = 64
    /// The most kept before an operator of a CMap, whose blocks hold up to 100 mappings of up
    /// to three operands each.
    static let maximumCMapOperands = 1_024

    private var parser: PDFParser
    private var operands: [PDFObject] = []
    private let maximumOperands: Int

    init(_ bytes: [UInt8], maximumOperands: Int = Self.maximumContentOperands) {
        parser = PDFParser(bytes: bytes)
        self.maximumOperands = maximumOperands
    }

    /// The next operator and its operands, or `nil` at the end of the stream.
    mutating func next() -> ContentOperation? {
        while true {
            parser.skipWhitespaceAndComments()
            guard parser.position < parser.bytes.count else { return nil }
            let start = parser.position
            switch parser.bytes[start] {
            case UInt8(ascii: "/"), UInt8(ascii: "("), UInt8(ascii: "<"), UInt8(ascii: "["):
                do {
                    push(try parser.readObject(depth: 1))
                } catch {
                    parser.position = start + 1
                    operands.removeAll()
                }
            case UInt8(ascii: "]"), UInt8(ascii: ">"), UInt8(ascii: ")"), UInt8(ascii: "{"), UInt8(ascii: "}"):
                parser.position = start + 1
            default:
                let token = parser.readToken()
                if token.isEmpty {
                    parser.position = start + 1
                } else if let number = PDFParser.number(token) {
                    push(number)
                } else if token == Array("true".utf8) || token == Array("false".utf8) {
                    push(.bool(token.count == 4))
                } else if token == Array("null".utf8) {
                    push(.null)
                } else {
                    let name = String(decoding: token, as: UTF8.self)
                    let operation = ContentOperation(name: name, operands: operands)
                    operands.removeAll(keepingCapacity: true)
                    if name == "BI" {
                        skipInlineImage()
                        continue
                    }
                    return operation
                }
            }
        }
    }

    private mutating func push(_ operand: PDFObject) {
        if operands.count == maximumOperands { operands.removeFirst() }
        operands.append(operand)
    }

    /// Skips an inline image's dictionary, `ID`, its data and `EI`: the data ends at the first
    /// `EI` between white-space (or at the end of the stream).
    private mutating func skipInlineImage() {
        let bytes = parser.bytes
        while parser.position < bytes.count {
            parser.skipWhitespaceAndComments()
            let start = parser.position
            if let object = try? parser.readObject(depth: 1), case .name = object {
                _ = try? parser.readObject(depth: 1)
                continue
            }
            parser.position = start
            let token = parser.readToken()
            if token == Array("ID".utf8) { break }
            if token.isEmpty { parser.position = start + 1 }
        }
        var index = parser.position + 1
        while index + 1 < bytes.count {
            if bytes[index] == UInt8(ascii: "E"), bytes[index + 1] == UInt8(ascii: "I"),
                PDFParser.isWhitespace(bytes[index - 1]),
                index + 2 >= bytes.count || PDFParser.isWhitespace(bytes[index + 2])
            {
                parser.position = index + 2
                return
            }
            index += 1
        }
        parser.position = bytes.count
    }
}
