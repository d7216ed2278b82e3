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
    /// out; each key at most once in `replacements`), as compact JSON with its keys in order: the
    /// bytes of the merged object's ``serialized(sortedKeys:)``, without the merged dictionary
    /// being made (every key hashed again).
    public static func serializedObject(
        _ members: [String: JSONValue], replacing replacements: [(key: String, value: JSONValue?)]
    ) -> Data {
        var merged: [(key: String, value: JSONValue)] = []
        merged.reserveCapacity(members.count + replacements.count)
        for member in members where !replacements.contains(where: { $0.key == member.key }) {
            merged.append(member)
        }
        for replacement in replacements {
            if let value = replacement.value { merged.append((replacement.key, value)) }
        }
        var output: [UInt8] = []
        output.reserveCapacity(256)
        writeObject(sorting: &merged, into: &output)
        return Data(output)
    }

    func write(into output: inout [UInt8], sortedKeys: Bool) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .integer(let value): Self.writeInteger(value, into: &output)
        case .double(let value): Self.writeDouble(value, into: &output)
        case .string(let value): Self.writeString(value, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                element.write(into: &output, sortedKeys: sortedKeys)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members) where sortedKeys && members.count > 1:
            // The members copied out (a key is most often a small string held inline, a value is
            // retained, not copied) and sorted: faster than sorting the dictionary's positions.
            var sorted = Array(members)
            Self.writeObject(sorting: &sorted, into: &output)
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (position, member) in members.enumerated() {
                Self.writeMember(member.key, member.value, first: position == 0, sortedKeys: sortedKeys, into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Writes an object of `members` with its keys in order (sorting `members`).
    private static func writeObject(
        sorting members: inout [(key: String, value: JSONValue)], into output: inout [UInt8]
    ) {
        members.sort { $0.key < $1.key }
        output.append(UInt8(ascii: "{"))
        for (position, member) in members.enumerated() {
            writeMember(member.key, member.value, first: position == 0, sortedKeys: true, into: &output)
        }
        output.append(UInt8(ascii: "}"))
    }

    private static func writeMember(
        _ key: String, _ value: JSONValue, first: Bool, sortedKeys: Bool, into output: inout [UInt8]
    ) {
        if !first { output.append(UInt8(ascii: ",")) }
        writeString(key, into: &output)
        output.append(UInt8(ascii: ":"))
        value.write(into: &output, sortedKeys: sortedKeys)
    }

    /// Appends the decimal digits of `value` (with its sign), without making a string of them.
    static func writeInteger(_ value: Int64, into output: inout [UInt8]) {
        if value < 0 { output.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        // 20 digits hold the largest magnitude, 2^63.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var first = digits.count
            repeat {
                first -= 1
                digits[first] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            output.append(contentsOf: UnsafeBufferPointer(rebasing: digits[first...]))
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
        return value.withUTF8(hasByteToEscape)
    }

    /// Whether `bytes` has a byte that a JSON string must escape, looked for eight bytes at a time:
    /// every string the server writes is checked (ids, names, dates, the text of notes), and a
    /// test per byte was most of the time spent writing them.
    static func hasByteToEscape(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let raw = UnsafeRawBufferPointer(bytes)
        // Each byte of a word tested at once (the carries of a subtraction, as in "Bit Twiddling
        // Hacks"): a lane's high bit is set where the byte is below 0x20, or where it equals the
        // byte compared with (its difference is zero). A borrow can set a higher lane only past a
        // lane that is set already, so a word's answer is exact.
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        func zeroLanes(_ word: UInt64) -> UInt64 { (word &- ones) & ~word & highBits }
        var index = 0
        while index + 8 <= raw.count {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            let control = (word &- ones &* 0x20) & ~word & highBits
            let quote = zeroLanes(word ^ (ones &* UInt64(UInt8(ascii: "\""))))
            let backslash = zeroLanes(word ^ (ones &* UInt64(UInt8(ascii: "\\"))))
            if control | quote | backslash != 0 { return true }
            index += 8
        }
        while index < raw.count {
            if mustEscape(raw[index]) { return true }
            index += 1
        }
        return false
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
            guard !hasByteToEscape(bytes) else { return false }
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
