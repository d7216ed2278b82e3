import Foundation

extension JSONValue {
    /// The value as compact UTF-8 JSON.
    ///
    /// - Parameter sortedKeys: write object members in key order, so that equal values give equal
    ///   bytes (the default).
    public func serialized(sortedKeys: Bool = true) -> Data {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        write(into: &output, sortedKeys: sortedKeys)
        return Data(output)
    }

    /// The value as a compact JSON string.
    public func serializedString(sortedKeys: Bool = true) -> String {
        String(decoding: serialized(sortedKeys: sortedKeys), as: UTF8.self)
    }

    /// The object `members` with the members of `replacements` put in (a `nil` value leaves its key
    /// out; each key at most once in `replacements`), as compact JSON with its keys in order: the bytes of the merged object's
    /// ``serialized(sortedKeys:)``, without the merged object being made (a copy of every member,
    /// each key hashed again).
    public static func serializedObject(
        _ members: [String: JSONValue], replacing replacements: [(key: String, value: JSONValue?)]
    ) -> Data {
        // Each member to write as a position: below `members.count` the object's member at that
        // position, above it the replacement at the rest.
        let indices = Array(members.indices)
        func key(at position: Int) -> String {
            position < indices.count ? members.keys[indices[position]] : replacements[position - indices.count].key
        }
        var order: [Int] = []
        order.reserveCapacity(indices.count + replacements.count)
        for position in indices.indices where !replacements.contains(where: { $0.key == key(at: position) }) {
            order.append(position)
        }
        for (offset, replacement) in replacements.enumerated() where replacement.value != nil {
            order.append(indices.count + offset)
        }
        order.sort { key(at: $0) < key(at: $1) }
        var output: [UInt8] = []
        output.reserveCapacity(256)
        output.append(UInt8(ascii: "{"))
        for (written, position) in order.enumerated() {
            if written > 0 { output.append(UInt8(ascii: ",")) }
            writeString(key(at: position), into: &output)
            output.append(UInt8(ascii: ":"))
            let value =
                position < indices.count
                ? members.values[indices[position]] : replacements[position - indices.count].value ?? .null
            value.write(into: &output, sortedKeys: true)
        }
        output.append(UInt8(ascii: "}"))
        return Data(output)
    }

    func write(into output: inout [UInt8], sortedKeys: Bool) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .integer(let value): output.append(contentsOf: String(value).utf8)
        case .double(let value): Self.writeDouble(value, into: &output)
        case .string(let value): Self.writeString(value, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                element.write(into: &output, sortedKeys: sortedKeys)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            func write(_ key: String, _ value: JSONValue, first: Bool) {
                if !first { output.append(UInt8(ascii: ",")) }
                Self.writeString(key, into: &output)
                output.append(UInt8(ascii: ":"))
                value.write(into: &output, sortedKeys: sortedKeys)
            }
            if sortedKeys {
                // The positions of the members are sorted, not the members: no copy of each value.
                let keys = members.keys
                var order = Array(keys.indices)
                order.sort { keys[$0] < keys[$1] }
                for (position, index) in order.enumerated() {
                    write(keys[index], members.values[index], first: position == 0)
                }
            } else {
                for (position, member) in members.enumerated() {
                    write(member.key, member.value, first: position == 0)
                }
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    static func writeDouble(_ value: Double, into output: inout [UInt8]) {
        guard value.isFinite else {
            // JSON has no infinities or NaN; such values cannot come from parsing.
            output.append(contentsOf: "null".utf8)
            return
        }
        // Swift prints the shortest digits that read back as the same double.
        output.append(contentsOf: value.description.utf8)
    }

    /// Whether `value` has a byte that a JSON string must escape: `"`, `\\` or a control character.
    public static func needsEscaping(_ value: String) -> Bool {
        var value = value
        // A native string's bytes are contiguous: checked as a buffer, not index by index.
        return value.withUTF8 { $0.contains(where: mustEscape) }
    }

    /// Whether a JSON string must escape `byte`: `"`, `\\` or a control character.
    private static func mustEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// Appends `value` as a JSON string (quoted, with `"`, `\\` and control characters escaped)
    /// to `output`, for callers that write JSON by hand around values they already hold as bytes.
    public static func writeString(_ value: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var value = value
        // A native string's bytes are contiguous: most strings (ids, names, kinds) need no escape
        // and are copied whole.
        let isPlain = value.withUTF8 { bytes in
            guard !bytes.contains(where: mustEscape) else { return false }
            output.append(contentsOf: bytes)
            return true
        }
        if !isPlain { writeEscaped(value, into: &output) }
        output.append(UInt8(ascii: "\""))
    }

    /// Appends the bytes of `value` with `"`, `\\` and control characters escaped.
    private static func writeEscaped(_ value: String, into output: inout [UInt8]) {
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                output.append(contentsOf: [
                    UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                    hex[Int(byte >> 4)], hex[Int(byte & 0xF)],
                ])
            default: output.append(byte)
            }
        }
    }
}

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
