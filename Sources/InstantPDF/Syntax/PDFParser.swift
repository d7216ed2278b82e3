import Foundation

/// Reads PDF objects from bytes (ISO 32000-1, 7.2 and 7.3).
struct PDFParser {
    /// The deepest nesting of arrays and dictionaries accepted.
    static let maximumDepth = 100

    let bytes: PDFBytes
    var position: Int
    /// Resolves an indirect `/Length` of a stream; `nil` when unknown.
    var resolveLength: ((PDFReference) -> Int?)?
    /// How many objects (and elements of arrays and dictionaries) this parser has read, for
    /// accounting of the memory that parsing decoded data takes.
    private(set) var objectCount = 0

    init(bytes: PDFBytes, position: Int = 0) {
        self.bytes = bytes
        self.position = min(max(position, 0), bytes.count)
    }

    /// A parser over a copy of `bytes` (decoded stream data).
    init(bytes: [UInt8], position: Int = 0) {
        self.init(bytes: PDFBytes(bytes), position: position)
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 || byte == 0x0C || byte == 0x00
    }

    static func isDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "["),
            UInt8(ascii: "]"), UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "/"), UInt8(ascii: "%"):
            return true
        default: return false
        }
    }

    static func isRegular(_ byte: UInt8) -> Bool { !isWhitespace(byte) && !isDelimiter(byte) }

    func error(_ message: String) -> PDFError {
        PDFError(.syntax, "\(message) at byte offset \(position)")
    }

    mutating func skipWhitespaceAndComments() {
        while position < bytes.count {
            let byte = bytes[position]
            if Self.isWhitespace(byte) {
                position += 1
            } else if byte == UInt8(ascii: "%") {
                while position < bytes.count, bytes[position] != 0x0A, bytes[position] != 0x0D { position += 1 }
            } else {
                return
            }
        }
    }

    /// Reads a keyword or number token without interpreting it.
    mutating func readToken() -> [UInt8] {
        skipWhitespaceAndComments()
        let start = position
        while position < bytes.count, Self.isRegular(bytes[position]) { position += 1 }
        return bytes.array(start..<position)
    }

    /// Reads an unsigned integer if one comes next; otherwise leaves the position as it was.
    mutating func readUnsignedInteger() -> Int? {
        let saved = position
        skipWhitespaceAndComments()
        var value = 0
        var digits = 0
        while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
            value = value &* 10 &+ Int(bytes[position] - UInt8(ascii: "0"))
            digits += 1
            position += 1
        }
        guard digits > 0, digits < 19, position >= bytes.count || !Self.isRegular(bytes[position]) else {
            position = saved
            return nil
        }
        return value
    }

    /// Reads `N G obj`, the object, and `endobj` (which may be missing).
    mutating func readIndirectObject() throws(PDFError) -> (PDFReference, PDFObject) {
        guard let number = readUnsignedInteger(), let generation = readUnsignedInteger() else {
            throw error("expected an object header `N G obj`")
        }
        guard readToken() == Array("obj".utf8) else { throw error("expected `obj`") }
        let object = try readObject(depth: 0, allowStream: true)
        return (PDFReference(number: number, generation: generation), object)
    }

    mutating func readObject(depth: Int = 0, allowStream: Bool = false) throws(PDFError) -> PDFObject {
        guard depth < Self.maximumDepth else { throw error("objects nested deeper than \(Self.maximumDepth) levels") }
        objectCount += 1
        skipWhitespaceAndComments()
        guard position < bytes.count else { throw error("unexpected end of file, expected an object") }
        let byte = bytes[position]
        switch byte {
        case UInt8(ascii: "/"):
            return .name(readName())
        case UInt8(ascii: "("):
            return .string(try readLiteralString())
        case UInt8(ascii: "<"):
            if position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "<") {
                position += 2
                let dictionary = try readDictionaryBody(depth: depth)
                if allowStream { return try readStreamIfPresent(dictionary) }
                return .dictionary(dictionary)
            }
            return .string(try readHexString())
        case UInt8(ascii: "["):
            position += 1
            var elements: [PDFObject] = []
            while true {
                skipWhitespaceAndComments()
                guard position < bytes.count else { throw error("unexpected end of file inside an array") }
                if bytes[position] == UInt8(ascii: "]") {
                    position += 1
                    return .array(elements)
                }
                elements.append(try readObject(depth: depth + 1))
            }
        default:
            return try readNumberKeywordOrReference()
        }
    }

    mutating func readName() -> String {
        position += 1
        var name: [UInt8] = []
        while position < bytes.count, Self.isRegular(bytes[position]) {
            let byte = bytes[position]
            if byte == UInt8(ascii: "#"), position + 2 < bytes.count, let high = hexValue(bytes[position + 1]),
                let low = hexValue(bytes[position + 2])
            {
                name.append(high << 4 | low)
                position += 3
            } else {
                name.append(byte)
                position += 1
            }
        }
        return String(decoding: name, as: UTF8.self)
    }

    func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    mutating func readLiteralString() throws(PDFError) -> Data {
        position += 1
        var result: [UInt8] = []
        var nesting = 1
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "("):
                nesting += 1
                result.append(byte)
            case UInt8(ascii: ")"):
                nesting -= 1
                if nesting == 0 { return Data(result) }
                result.append(byte)
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { break }
                let escaped = bytes[position]
                position += 1
                switch escaped {
                case UInt8(ascii: "n"): result.append(0x0A)
                case UInt8(ascii: "r"): result.append(0x0D)
                case UInt8(ascii: "t"): result.append(0x09)
                case UInt8(ascii: "b"): result.append(0x08)
                case UInt8(ascii: "f"): result.append(0x0C)
                case 0x0D:
                    if position < bytes.count, bytes[position] == 0x0A { position += 1 }
                case 0x0A:
                    break
                case UInt8(ascii: "0")...UInt8(ascii: "7"):
                    var value = Int(escaped - UInt8(ascii: "0"))
                    for _ in 0..<2 {
                        guard position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(bytes[position])
                        else { break }
                        value = value * 8 + Int(bytes[position] - UInt8(ascii: "0"))
                        position += 1
                    }
                    result.append(UInt8(truncatingIfNeeded: value))
                default:
                    result.append(escaped)
                }
            default:
                result.append(byte)
            }
        }
        throw error("unterminated string")
    }

    mutating func readHexString() throws(PDFError) -> Data {
        position += 1
        var result: [UInt8] = []
        var pending: UInt8?
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            if byte == UInt8(ascii: ">") {
                if let pending { result.append(pending << 4) }
                return Data(result)
            }
            if Self.isWhitespace(byte) { continue }
            guard let value = hexValue(byte) else { throw error("invalid character in a hexadecimal string") }
            if let high = pending {
                result.append(high << 4 | value)
                pending = nil
            } else {
                pending = value
            }
        }
        throw error("unterminated hexadecimal string")
    }

    mutating func readDictionaryBody(depth: Int) throws(PDFError) -> PDFDictionary {
        var entries: [String: PDFObject] = [:]
        while true {
            skipWhitespaceAndComments()
            guard position < bytes.count else { throw error("unexpected end of file inside a dictionary") }
            if bytes[position] == UInt8(ascii: ">") {
                position += 1
                if position < bytes.count, bytes[position] == UInt8(ascii: ">") { position += 1 }
                return PDFDictionary(entries)
            }
            guard bytes[position] == UInt8(ascii: "/") else {
                // Damaged dictionary: skip the stray token, as viewers do.
                let token = readToken()
                if token.isEmpty { position += 1 }
                continue
            }
            let key = readName()
            skipWhitespaceAndComments()
            if position < bytes.count, bytes[position] == UInt8(ascii: ">") {
                entries[key] = .null
                continue
            }
            let value = try readObject(depth: depth + 1)
            if value != .null { entries[key] = value }
        }
    }

    mutating func readStreamIfPresent(_ dictionary: PDFDictionary) throws(PDFError) -> PDFObject {
        let afterDictionary = position
        let token = readToken()
        guard token == Array("stream".utf8) else {
            position = afterDictionary
            return .dictionary(dictionary)
        }
        // The data starts after CRLF or LF (a lone CR is tolerated).
        if position < bytes.count, bytes[position] == 0x0D { position += 1 }
        if position < bytes.count, bytes[position] == 0x0A { position += 1 }
        let start = position
        var length: Int?
        switch dictionary["Length"] {
        case .integer(let value)?: length = value
        case .reference(let reference)?: length = resolveLength?(reference)
        default: length = nil
        }
        if let length, length >= 0, start + length <= bytes.count, endstreamFollows(start + length) {
            position = start + length
        } else {
            // A missing or wrong /Length: the data ends at the next `endstream`.
            guard let end = find(Array("endstream".utf8), from: start) else {
                throw error("stream without `endstream`")
            }
            var dataEnd = end
            if dataEnd > start, bytes[dataEnd - 1] == 0x0A { dataEnd -= 1 }
            if dataEnd > start, bytes[dataEnd - 1] == 0x0D { dataEnd -= 1 }
            position = dataEnd
        }
        let data = bytes.data(start..<position)
        if let end = find(Array("endstream".utf8), from: position), end - position < 64 {
            position = end + 9
        }
        return .stream(PDFStream(dictionary: dictionary, rawData: data))
    }

    func endstreamFollows(_ offset: Int) -> Bool {
        var index = offset
        while index < bytes.count, Self.isWhitespace(bytes[index]), index - offset < 4 { index += 1 }
        let keyword = Array("endstream".utf8)
        return index + keyword.count <= bytes.count && bytes[index..<index + keyword.count].elementsEqual(keyword)
    }

    func find(_ needle: [UInt8], from start: Int) -> Int? {
        guard needle.count > 0, start < bytes.count else { return nil }
        var index = start
        let first = needle[0]
        while index + needle.count <= bytes.count {
            if bytes[index] == first, bytes[index..<index + needle.count].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }

    mutating func readNumberKeywordOrReference() throws(PDFError) -> PDFObject {
        let start = position
        let token = readToken()
        guard !token.isEmpty else {
            position += 1
            throw error("unexpected character '\(String(UnicodeScalar(bytes[start])))'")
        }
        switch token {
        case Array("true".utf8): return .bool(true)
        case Array("false".utf8): return .bool(false)
        case Array("null".utf8): return .null
        default: break
        }
        guard let number = Self.number(token) else {
            throw PDFError(
                .syntax,
                "unexpected keyword `\(String(decoding: token.prefix(20), as: UTF8.self))` at byte offset \(start)")
        }
        if case .integer(let objectNumber) = number, objectNumber >= 0 {
            // `N G R` is a reference.
            let afterFirst = position
            if let generation = readUnsignedInteger() {
                let afterSecond = position
                skipWhitespaceAndComments()
                if position < bytes.count, bytes[position] == UInt8(ascii: "R"),
                    position + 1 >= bytes.count || !Self.isRegular(bytes[position + 1])
                {
                    position += 1
                    return .reference(PDFReference(number: objectNumber, generation: generation))
                }
                position = afterSecond
            }
            position = afterFirst
        }
        return number
    }

    static func number(_ token: [UInt8]) -> PDFObject? {
        var index = 0
        var negative = false
        if index < token.count, token[index] == UInt8(ascii: "-") || token[index] == UInt8(ascii: "+") {
            negative = token[index] == UInt8(ascii: "-")
            index += 1
            // Some writers emit `--5`.
            while index < token.count, token[index] == UInt8(ascii: "-") { index += 1 }
        }
        var integer = 0
        var fraction = 0.0
        var scale = 1.0
        var sawDigit = false
        var sawPoint = false
        while index < token.count {
            let byte = token[index]
            if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                sawDigit = true
                if sawPoint {
                    scale /= 10
                    fraction += Double(byte - UInt8(ascii: "0")) * scale
                } else {
                    integer = integer &* 10 &+ Int(byte - UInt8(ascii: "0"))
                }
            } else if byte == UInt8(ascii: "."), !sawPoint {
                sawPoint = true
            } else {
                return nil
            }
            index += 1
        }
        guard sawDigit else { return nil }
        if !sawPoint, token.count < 19 { return .integer(negative ? -integer : integer) }
        let value = Double(integer) + fraction
        return .real(negative ? -value : value)
    }
}
