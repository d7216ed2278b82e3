import Foundation

/// Writes PDF objects in the syntax of ISO 32000-1, 7.3: compact, deterministic (dictionary keys in
/// sorted order) and readable by every parser.
enum PDFSerializer {
    /// Appends `object` to `output`. Streams get a `/Length` that matches their data.
    static func write(_ object: PDFObject, to output: inout [UInt8]) {
        switch object {
        case .null: output += Array("null".utf8)
        case .bool(let value): output += Array((value ? "true" : "false").utf8)
        case .integer(let value): output += Array(String(value).utf8)
        case .real(let value): output += Array(number(value).utf8)
        case .string(let data): writeString([UInt8](data), to: &output)
        case .name(let name): writeName(name, to: &output)
        case .reference(let reference): output += Array("\(reference.number) \(reference.generation) R".utf8)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: " ")) }
                write(element, to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .dictionary(let dictionary):
            writeDictionary(dictionary, to: &output)
        case .stream(let stream):
            var dictionary = stream.dictionary
            dictionary["Length"] = .integer(stream.rawData.count)
            writeDictionary(dictionary, to: &output)
            output += Array("\nstream\n".utf8)
            output += stream.rawData
            output += Array("\nendstream".utf8)
        }
    }

    /// The bytes of one object.
    static func bytes(_ object: PDFObject) -> [UInt8] {
        var output: [UInt8] = []
        write(object, to: &output)
        return output
    }

    /// A real number without exponent, with at most 6 decimals and no trailing zeros; values that
    /// are not finite become 0 (PDF has no NaN or infinity).
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let rounded = (value * 1_000_000).rounded() / 1_000_000
        if rounded == rounded.rounded(), abs(rounded) < 1e15 { return String(Int(rounded)) }
        var text = String(format: "%.6f", rounded)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }

    private static func writeDictionary(_ dictionary: PDFDictionary, to output: inout [UInt8]) {
        output += Array("<<".utf8)
        for key in dictionary.entries.keys.sorted() {
            guard let value = dictionary.entries[key] else { continue }
            writeName(key, to: &output)
            output.append(UInt8(ascii: " "))
            write(value, to: &output)
        }
        output += Array(">>".utf8)
    }

    /// A name with `#xx` escapes for delimiters, `#`, and bytes outside the printable range.
    private static func writeName(_ name: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "/"))
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in name.utf8 {
            if byte > 0x20, byte < 0x7F, !"()<>[]{}/%#".utf8.contains(byte) {
                output.append(byte)
            } else {
                output += [UInt8(ascii: "#"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
    }

    /// Text-like strings as literals with escapes, binary ones (encrypted, IDs) in hexadecimal.
    private static func writeString(_ bytes: [UInt8], to output: inout [UInt8]) {
        let printable = bytes.allSatisfy { ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        guard printable else {
            let hex = Array("0123456789ABCDEF".utf8)
            output.append(UInt8(ascii: "<"))
            for byte in bytes { output += [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]] }
            output.append(UInt8(ascii: ">"))
            return
        }
        output.append(UInt8(ascii: "("))
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "\\"): output += [UInt8(ascii: "\\"), byte]
            case 0x0A: output += Array("\\n".utf8)
            case 0x0D: output += Array("\\r".utf8)
            case 0x09: output += Array("\\t".utf8)
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: ")"))
    }
}

extension PDFObject {
    /// A text string: PDFDocEncoding-compatible ASCII as is, anything else as UTF-16BE with a byte
    /// order mark (ISO 32000-1, 7.9.2.2), so every reader decodes it.
    static func text(_ value: String) -> PDFObject {
        if value.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F || $0 == "\n" || $0 == "\r" }) {
            return .string(Data(value.utf8))
        }
        var bytes: [UInt8] = [0xFE, 0xFF]
        for unit in value.utf16 { bytes += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
        return .string(Data(bytes))
    }

    /// A number: an integer when it has no fraction.
    static func number(_ value: Double) -> PDFObject {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 { return .integer(Int(value)) }
        return .real(value.isFinite ? value : 0)
    }
}
