import Foundation

extension JSONValue {
    /// The value as compact UTF-8 JSON, object members in key order (as ``JSONObject`` keeps
    /// them), so that equal values give equal bytes.
    public func serialized() -> Data {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        write(into: &output)
        return Data(output)
    }

    /// The value as a compact JSON string, object members in key order.
    public func serializedString() -> String {
        String(decoding: serialized(), as: UTF8.self)
    }

    /// The object `members` with the members of `replacements` put in (a `nil` value leaves its key
    /// out; each key at most once in `replacements`, best in key order, which is not sorted again),
    /// as compact JSON with its keys in order: the bytes of the merged object's ``serialized()``,
    /// without the merged object being made.
    public static func serializedObject(
        _ members: JSONObject, replacing replacements: [(key: String, value: JSONValue?)]
    ) -> Data {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        output.append(UInt8(ascii: "{"))
        var first = true
        func write(_ key: String, _ value: JSONValue) {
            writeMember(key, value, first: first, into: &output)
            first = false
        }
        // The replacements in key order, then walked beside the members (both in order).
        let isSorted = zip(replacements, replacements.dropFirst()).allSatisfy { $0.key < $1.key }
        let replacements = isSorted ? replacements : replacements.sorted { $0.key < $1.key }
        var next = 0
        for member in members {
            while next < replacements.count, replacements[next].key < member.key {
                if let value = replacements[next].value { write(replacements[next].key, value) }
                next += 1
            }
            if next < replacements.count, replacements[next].key == member.key {
                if let value = replacements[next].value { write(member.key, value) }
                next += 1
            } else {
                write(member.key, member.value)
            }
        }
        for replacement in replacements[next...] {
            if let value = replacement.value { write(replacement.key, value) }
        }
        output.append(UInt8(ascii: "}"))
        return Data(output)
    }

    func write(into output: inout [UInt8]) {
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
                element.write(into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (position, member) in members.enumerated() {
                Self.writeMember(member.key, member.value, first: position == 0, into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static func writeMember(_ key: String, _ value: JSONValue, first: Bool, into output: inout [UInt8]) {
        if !first { output.append(UInt8(ascii: ",")) }
        writeString(key, into: &output)
        output.append(UInt8(ascii: ":"))
        value.write(into: &output)
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
        var index = 0
        while index + 8 <= raw.count {
            if escapeLanes(raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)) != 0 { return true }
            index += 8
        }
        while index < raw.count {
            if mustEscape(raw[index]) { return true }
            index += 1
        }
        return false
    }

    /// The lanes of `word` (the high bit of each of its bytes) whose byte a JSON string must
    /// escape: `"`, `\\` or a control character.
    ///
    /// Each byte is tested at once (the carries of a subtraction, as in "Bit Twiddling Hacks"): a
    /// lane's high bit is set where the byte is below 0x20, or where it equals the byte compared
    /// with (its difference is zero). A borrow can set a higher lane only past a lane that is set
    /// already, so whether any lane is set is exact, and so is the lowest lane set.
    static func escapeLanes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        func zeroLanes(_ word: UInt64) -> UInt64 { (word &- ones) & ~word & highBits }
        let control = (word &- ones &* 0x20) & ~word & highBits
        let quote = zeroLanes(word ^ (ones &* UInt64(UInt8(ascii: "\""))))
        let backslash = zeroLanes(word ^ (ones &* UInt64(UInt8(ascii: "\\"))))
        return control | quote | backslash
    }

    /// Whether a JSON string must escape `byte`: `"`, `\\` or a control character.
    static func mustEscape(_ byte: UInt8) -> Bool {
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
            self = .object(try container.decode(JSONObject.self))
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
