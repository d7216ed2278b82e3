import Foundation

/// A small XML reader for XFDF: elements, attributes, text and CDATA, the five predefined entities
/// and character references. Document type declarations are refused (no entity can expand), and
/// the depth, element count and attribute count are limited (``XFDFLimits``).
///
/// Namespace prefixes are dropped from element names (`xfdf:annots` is `annots`); attribute names
/// are kept as written.
struct XMLTree {
    /// One element: its local name, attributes, children, text and the line it starts on.
    struct Element {
        var name: String
        var attributes: [String: String]
        var children: [Element]
        /// The element's own text (not its children's), CDATA included.
        var text: String
        /// The line of the element's `<`, from 1.
        var line: Int

        /// The first child with the given name (case-insensitive).
        func child(_ name: String) -> Element? {
            children.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
        }

        /// The attribute with the given name (case-insensitive).
        func attribute(_ name: String) -> String? {
            if let value = attributes[name] { return value }
            return attributes.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
        }

        /// The text of the element and all its descendants, in document order.
        var allText: String { text + children.map(\.allText).joined() }
    }

    let root: Element

    /// Parses a UTF-8 document (a byte order mark is skipped).
    init(_ data: Data, limits: XFDFLimits) throws(XFDFError) {
        var parser = Parser(bytes: [UInt8](data), limits: limits)
        root = try parser.document()
    }

    private struct Parser {
        let bytes: [UInt8]
        let limits: XFDFLimits
        var position = 0
        var line = 1
        var elementCount = 0

        init(bytes: [UInt8], limits: XFDFLimits) {
            self.bytes = bytes
            self.limits = limits
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
        }

        func error(_ message: String, line: Int? = nil) -> XFDFError {
            XFDFError(message, line: line ?? self.line)
        }

        mutating func document() throws(XFDFError) -> Element {
            if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) {
                throw error("the XFDF is UTF-16; save it as UTF-8")
            }
            var root: Element?
            while true {
                skipWhitespace()
                guard position < bytes.count else { break }
                guard bytes[position] == UInt8(ascii: "<") else {
                    throw error(
                        root == nil ? "the file is not XML: it does not start with '<'" : "text after the root element")
                }
                if try skipMarkup() { continue }
                guard root == nil else { throw error("a second root element") }
                root = try element(depth: 1)
            }
            guard let root else { throw error("the file has no root element") }
            return root
        }

        /// Skips a comment, processing instruction or XML declaration; refuses a DOCTYPE.
        /// Returns false at an element's start tag.
        mutating func skipMarkup() throws(XFDFError) -> Bool {
            if starts("<?") {
                try skip(past: "?>", what: "processing instruction")
                return true
            }
            if starts("<!--") {
                try skip(past: "-->", what: "comment")
                return true
            }
            if starts("<!DOCTYPE") || starts("<!doctype") {
                throw error("document type declarations are not accepted in XFDF (they can define entities)")
            }
            return false
        }

        mutating func element(depth: Int) throws(XFDFError) -> Element {
            guard depth <= limits.maximumDepth else {
                throw error("elements are nested deeper than \(limits.maximumDepth) levels")
            }
            elementCount += 1
            guard elementCount <= limits.maximumElementCount else {
                throw error("the XFDF has more than \(limits.maximumElementCount) elements")
            }
            let startLine = line
            position += 1  // <
            let qualified = name()
            guard !qualified.isEmpty else { throw error("'<' is not followed by an element name") }
            var element = Element(
                name: Self.localName(qualified), attributes: [:], children: [], text: "", line: startLine)
            // Attributes, then `>` or `/>`.
            while true {
                skipWhitespace()
                guard position < bytes.count else { throw error("the file ends inside the tag <\(qualified)>") }
                if starts("/>") {
                    position += 2
                    return element
                }
                if bytes[position] == UInt8(ascii: ">") {
                    position += 1
                    break
                }
                let attribute = name()
                guard !attribute.isEmpty else {
                    throw error("unexpected '\(Character(Unicode.Scalar(bytes[position])))' in the tag <\(qualified)>")
                }
                skipWhitespace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: "=") else {
                    throw error("the attribute '\(attribute)' of <\(qualified)> has no value")
                }
                position += 1
                skipWhitespace()
                guard position < bytes.count,
                    bytes[position] == UInt8(ascii: "\"") || bytes[position] == UInt8(ascii: "'")
                else { throw error("the value of '\(attribute)' in <\(qualified)> is not quoted") }
                let quote = bytes[position]
                position += 1
                let value = try characterData(until: quote, what: "the value of '\(attribute)'")
                position += 1
                guard element.attributes.updateValue(value, forKey: attribute) == nil else {
                    throw error("the attribute '\(attribute)' appears twice in <\(qualified)>")
                }
                guard element.attributes.count <= limits.maximumAttributeCount else {
                    throw error("<\(qualified)> has more than \(limits.maximumAttributeCount) attributes")
                }
            }
            // Content, up to the end tag.
            while true {
                guard position < bytes.count else {
                    throw error("the element <\(qualified)> that starts on line \(startLine) is not closed")
                }
                if bytes[position] != UInt8(ascii: "<") {
                    element.text += try characterData(until: UInt8(ascii: "<"), what: "text")
                    continue
                }
                if starts("</") {
                    position += 2
                    let closing = name()
                    guard closing == qualified else {
                        throw error("</\(closing)> closes <\(qualified)> of line \(startLine)")
                    }
                    skipWhitespace()
                    guard position < bytes.count, bytes[position] == UInt8(ascii: ">") else {
                        throw error("the end tag </\(closing)> is not closed by '>'")
                    }
                    position += 1
                    return element
                }
                if starts("<![CDATA[") {
                    position += 9
                    let start = position
                    try skip(past: "]]>", what: "CDATA section")
                    element.text += String(decoding: bytes[start..<position - 3], as: UTF8.self)
                    continue
                }
                if try skipMarkup() { continue }
                element.children.append(try self.element(depth: depth + 1))
            }
        }

        /// Text up to `terminator` (not consumed), with entity and character references replaced.
        mutating func characterData(until terminator: UInt8, what: String) throws(XFDFError) -> String {
            var result: [UInt8] = []
            while true {
                guard position < bytes.count else {
                    if terminator == UInt8(ascii: "<") { break }
                    throw error("the file ends inside \(what)")
                }
                let byte = bytes[position]
                if byte == terminator { break }
                if byte == UInt8(ascii: "<") { throw error("'<' inside \(what)") }
                if byte == UInt8(ascii: "\n") { line += 1 }
                if byte == UInt8(ascii: "&") {
                    result += try reference()
                    continue
                }
                result.append(byte)
                position += 1
            }
            guard let text = String(validating: result, as: UTF8.self) else {
                throw error("\(what) is not valid UTF-8")
            }
            return text
        }

        /// `&lt;`, `&gt;`, `&amp;`, `&quot;`, `&apos;`, `&#N;` or `&#xH;` as UTF-8 bytes.
        mutating func reference() throws(XFDFError) -> [UInt8] {
            guard let end = bytes[position...].prefix(12).firstIndex(of: UInt8(ascii: ";")) else {
                throw error("'&' does not start an entity reference (write &amp;)")
            }
            let entity = String(decoding: bytes[(position + 1)..<end], as: UTF8.self)
            position = end + 1
            switch entity {
            case "lt": return [UInt8(ascii: "<")]
            case "gt": return [UInt8(ascii: ">")]
            case "amp": return [UInt8(ascii: "&")]
            case "quot": return [UInt8(ascii: "\"")]
            case "apos": return [UInt8(ascii: "'")]
            default:
                var value: UInt32?
                if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
                    value = UInt32(entity.dropFirst(2), radix: 16)
                } else if entity.hasPrefix("#") {
                    value = UInt32(entity.dropFirst())
                }
                guard let value else { throw error("unknown entity '&\(entity);'") }
                guard let scalar = Unicode.Scalar(value), value != 0 else {
                    throw error("'&\(entity);' is not a character")
                }
                return Array(String(Character(scalar)).utf8)
            }
        }

        mutating func name() -> String {
            let start = position
            while position < bytes.count {
                let byte = bytes[position]
                let isNameByte =
                    byte >= 0x80 || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                    || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                    || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
                    || byte == UInt8(ascii: ":")
                guard isNameByte else { break }
                position += 1
            }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }

        static func localName(_ qualified: String) -> String {
            qualified.lastIndex(of: ":").map { String(qualified[qualified.index(after: $0)...]) } ?? qualified
        }

        func starts(_ literal: String) -> Bool {
            let utf8 = Array(literal.utf8)
            return position + utf8.count <= bytes.count && bytes[position..<position + utf8.count].elementsEqual(utf8)
        }

        mutating func skip(past terminator: String, what: String) throws(XFDFError) {
            let startLine = line
            let utf8 = Array(terminator.utf8)
            while position < bytes.count {
                if starts(terminator) {
                    position += utf8.count
                    return
                }
                if bytes[position] == UInt8(ascii: "\n") { line += 1 }
                position += 1
            }
            throw error("the \(what) that starts on line \(startLine) is not closed", line: startLine)
        }

        mutating func skipWhitespace() {
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): position += 1
                case UInt8(ascii: "\n"):
                    line += 1
                    position += 1
                default: return
                }
            }
        }
    }
}

extension String {
    /// The string with `&`, `<`, `>`, `"` and control characters escaped for XML text or a
    /// double-quoted attribute value.
    var xmlEscaped: String {
        var result = ""
        result.reserveCapacity(utf8.count)
        for scalar in unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "\n", "\r", "\t": result += "&#\(scalar.value);"
            default:
                // XML 1.0 cannot carry other C0 controls, even as references: they are left out.
                if scalar.value >= 0x20 { result.unicodeScalars.append(scalar) }
            }
        }
        return result
    }
}
