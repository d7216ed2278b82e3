import Foundation

extension JSONValue {
    /// The deepest nesting of arrays and objects that the parser accepts.
    public static let maximumNestingDepth = 512

    /// Parses UTF-8 JSON bytes.
    ///
    /// - Throws: ``InstantJSONError`` with code ``InstantJSONError/Code/malformedJSON`` whose rule
    ///   names the line and column of the first problem: truncated input, bad tokens, invalid
    ///   escapes, numbers out of range, nesting deeper than ``maximumNestingDepth``, trailing data.
    public init(parsing data: some DataProtocol) throws(InstantJSONError) {
        let bytes: [UInt8] = Array(data)
        var parser = Parser(bytes: bytes)
        self = try parser.parseDocument()
    }

    /// Parses a JSON string.
    public init(parsing string: String) throws(InstantJSONError) {
        try self.init(parsing: Array(string.utf8))
    }
}

private struct Parser {
    let bytes: [UInt8]
    var index = 0
    var depth = 0
    /// The members of the objects being parsed, innermost last: an object's members are gathered
    /// here and copied out once, at its final size (most often already in key order, as writers
    /// of JSON with sorted keys send them).
    var pendingMembers: [JSONObject.Element] = []
    /// The elements of the arrays being parsed, innermost last, gathered as members are: an array
    /// grown element by element was allocated again at each doubling (the four numbers of every
    /// annotation's box: three allocations).
    var pendingElements: [JSONValue] = []

    init(bytes: [UInt8]) {
        self.bytes = bytes
        pendingMembers.reserveCapacity(32)
        pendingElements.reserveCapacity(32)
    }

    mutating func parseDocument() throws(InstantJSONError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        if index < bytes.count {
            throw failure("unexpected data after the JSON value")
        }
        return value
    }

    func failure(_ message: String) -> InstantJSONError {
        var line = 1
        var column = 1
        for byte in bytes[..<min(index, bytes.count)] {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return InstantJSONError(
            code: .malformedJSON, path: "", rule: "malformed JSON at line \(line), column \(column): \(message)")
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    mutating func parseValue() throws(InstantJSONError) -> JSONValue {
        guard index < bytes.count else { throw failure("unexpected end of input, expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try parseNumber()
        default:
            throw failure("unexpected character '\(printable(bytes[index]))', expected a value")
        }
    }

    func printable(_ byte: UInt8) -> String {
        (0x20..<0x7F).contains(byte) ? String(UnicodeScalar(byte)) : String(format: "\\x%02X", byte)
    }

    mutating func expectLiteral(_ literal: StaticString) throws(InstantJSONError) {
        let count = literal.utf8CodeUnitCount
        let matches = literal.withUTF8Buffer { expected in
            index + count <= bytes.count && bytes[index..<index + count].elementsEqual(expected)
        }
        guard matches else { throw failure("invalid literal, expected \(literal)") }
        index += count
    }

    mutating func enterNesting() throws(InstantJSONError) {
        depth += 1
        if depth > JSONValue.maximumNestingDepth {
            throw failure("nesting deeper than \(JSONValue.maximumNestingDepth) levels")
        }
    }

    mutating func parseObject() throws(InstantJSONError) -> JSONValue {
        try enterNesting()
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(JSONObject())
        }
        let start = pendingMembers.count
        // On a failure the whole parse ends, so what is pending is left as it is.
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw failure("unexpected end of input inside an object") }
            guard bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a string key in an object") }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw failure("expected ':' after the key \"\(key)\"")
            }
            index += 1
            skipWhitespace()
            let value = try parseValue()
            pendingMembers.append((key, value))
            skipWhitespace()
            guard index < bytes.count else { throw failure("unexpected end of input inside an object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                depth -= 1
                return .object(takeMembers(from: start))
            }
            throw failure("expected ',' or '}' in an object")
        }
    }

    /// Takes the pending members from `start` on into an object; of a key given twice, the last
    /// value counts.
    mutating func takeMembers(from start: Int) -> JSONObject {
        JSONObject(Self.take(&pendingMembers, from: start), uniquingKeysWith: { _, last in last })
    }

    /// Takes the elements of `pending` from `start` on, copied as one block: `Array(pending[start...])`
    /// copied them one at a time, through an iterator of the slice (3% of a node's time in the
    /// 100-change throughput benchmark).
    static func take<Element>(_ pending: inout [Element], from start: Int) -> [Element] {
        let taken = pending.withUnsafeBufferPointer { Array(UnsafeBufferPointer(rebasing: $0[start...])) }
        // One at a time: removing a range goes through the general replacement of a subrange.
        for _ in start..<pending.count { pending.removeLast() }
        return taken
    }

    mutating func parseArray() throws(InstantJSONError) -> JSONValue {
        try enterNesting()
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array([])
        }
        let start = pendingElements.count
        // On a failure the whole parse ends, so what is pending is left as it is.
        while true {
            skipWhitespace()
            let element = try parseValue()
            pendingElements.append(element)
            skipWhitespace()
            guard index < bytes.count else { throw failure("unexpected end of input inside an array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                depth -= 1
                return .array(Self.take(&pendingElements, from: start))
            }
            throw failure("expected ',' or ']' in an array")
        }
    }

    mutating func parseString() throws(InstantJSONError) -> String {
        index += 1
        let start = index
        // Fast path: ASCII without escapes, as nearly every string of a record is, found eight
        // bytes at a time, and text as it is (ASCII is UTF-8).
        index = bytes.withUnsafeBufferPointer { Self.endOfASCIIRun(in: $0, from: start) }
        if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
            defer { index += 1 }
            return bytes.withUnsafeBufferPointer { bytes in
                String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            }
        }
        // Otherwise on from there, a byte at a time: characters beyond ASCII, checked as UTF-8 at
        // the end, and escapes.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let string = try validUTF8(bytes[start..<index], at: start)
                index += 1
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw failure("unescaped control character in a string") }
            index += 1
        }
        var buffer = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return try validUTF8(buffer[...], at: start)
            }
            if byte < 0x20 { throw failure("unescaped control character in a string") }
            if byte != UInt8(ascii: "\\") {
                buffer.append(byte)
                index += 1
                continue
            }
            index += 1
            guard index < bytes.count else { break }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): buffer.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): buffer.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "/"): buffer.append(UInt8(ascii: "/"))
            case UInt8(ascii: "b"): buffer.append(0x08)
            case UInt8(ascii: "f"): buffer.append(0x0C)
            case UInt8(ascii: "n"): buffer.append(0x0A)
            case UInt8(ascii: "r"): buffer.append(0x0D)
            case UInt8(ascii: "t"): buffer.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try parseHexQuad()
                if (0xD800..<0xDC00).contains(scalar) {
                    // A high surrogate must be followed by an escaped low surrogate.
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                        bytes[index + 1] == UInt8(ascii: "u")
                    else { throw failure("unpaired UTF-16 surrogate in a \\u escape") }
                    index += 2
                    let low = try parseHexQuad()
                    guard (0xDC00..<0xE000).contains(low) else {
                        throw failure("unpaired UTF-16 surrogate in a \\u escape")
                    }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00..<0xE000).contains(scalar) {
                    throw failure("unpaired UTF-16 surrogate in a \\u escape")
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw failure("invalid \\u escape") }
                buffer.append(contentsOf: Array(String(Character(unicode)).utf8))
            default:
                throw failure("invalid escape '\\\(printable(escape))' in a string")
            }
        }
        throw failure("unexpected end of input inside a string")
    }

    /// The position of the first byte from `start` on where a string of ASCII without escapes
    /// stops: `"`, `\\`, a control character or a byte beyond ASCII; `bytes.count` when none does.
    /// Looked for eight bytes at a time, where a test per byte was most of a parse of a record's
    /// strings.
    static func endOfASCIIRun(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        let raw = UnsafeRawBufferPointer(bytes)
        let highBits: UInt64 = 0x8080_8080_8080_8080
        var index = start
        while index + 8 <= raw.count {
            // The first byte in the lowest lane, on any byte order.
            let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            let stops = JSONValue.escapeLanes(word) | (word & highBits)
            if stops != 0 { return index + stops.trailingZeroBitCount / 8 }
            index += 8
        }
        while index < raw.count, raw[index] < 0x80, !JSONValue.mustEscape(raw[index]) { index += 1 }
        return index
    }

    /// The bytes of a string as text; JSON text is UTF-8, and bytes that are not are refused rather
    /// than replaced, so that what is stored is what was sent.
    func validUTF8(_ slice: ArraySlice<UInt8>, at start: Int) throws(InstantJSONError) -> String {
        let decoded = slice.withUnsafeBufferPointer { bytes -> String? in
            // ASCII, as nearly every string of a record is, is UTF-8 as it is: it skips the
            // validation, which the standard library runs unspecialized, a byte at a time.
            if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
            return String(validating: bytes, as: UTF8.self)
        }
        guard let string = decoded else {
            var position = self
            position.index = start
            throw position.failure("invalid UTF-8 in a string")
        }
        return string
    }

    mutating func parseHexQuad() throws(InstantJSONError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("unexpected end of input in a \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("invalid hex digit in a \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    mutating func parseNumber() throws(InstantJSONError) -> JSONValue {
        let start = index
        var negative = false
        if bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        guard index < bytes.count, isDigit(bytes[index]) else { throw failure("invalid number") }
        // Mantissa digits accumulated for the fast path (exact when at most 15 significant digits).
        var mantissa: UInt64 = 0
        var digitCount = 0
        var fractionDigits = 0
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw failure("invalid number: leading zero") }
        } else {
            while index < bytes.count, isDigit(bytes[index]) {
                if digitCount < 19 { mantissa = mantissa &* 10 &+ UInt64(bytes[index] - UInt8(ascii: "0")) }
                digitCount += 1
                index += 1
            }
        }
        var isIntegral = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isIntegral = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw failure("invalid number: digit expected after '.'")
            }
            while index < bytes.count, isDigit(bytes[index]) {
                if digitCount < 19 {
                    mantissa = mantissa &* 10 &+ UInt64(bytes[index] - UInt8(ascii: "0"))
                    fractionDigits += 1
                }
                if mantissa != 0 { digitCount += 1 }
                index += 1
            }
        }
        var hasExponent = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isIntegral = false
            hasExponent = true
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else {
                throw failure("invalid number: digit expected in the exponent")
            }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if isIntegral, digitCount <= 18 {
            let value = Int64(mantissa)
            return .integer(negative ? -value : value)
        }
        if !hasExponent, digitCount <= 15, fractionDigits <= 22 {
            // Both the mantissa and the power of ten are exact doubles, so one division is exact.
            let value = Double(mantissa) / Self.powersOfTen[fractionDigits]
            return .double(negative ? -value : value)
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isIntegral, let integer = Int64(text) {
            return .integer(integer)
        }
        guard let double = Double(text), double.isFinite else {
            throw failure("number \(text.prefix(40)) is out of range")
        }
        return .double(double)
    }

    static let powersOfTen: [Double] = (0...22).map { exponent in
        var value = 1.0
        for _ in 0..<exponent { value *= 10 }
        return value
    }

    func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}
