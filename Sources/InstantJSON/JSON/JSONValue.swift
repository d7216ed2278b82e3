/// A JSON value, kept exactly as it was read.
///
/// Integers written without a fraction or exponent stay integers (`5` never comes back as
/// `5.0`, and integers up to 64 bits are not rounded); everything else is a `Double`. Objects are
/// unordered, as JSON defines them, and kept in key order (``JSONObject``). `JSONValue` carries
/// the keys of a record that this version does not know and free-form data such as `customData`,
/// so that nothing a newer peer wrote is lost.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

extension JSONValue {
    /// The string, if this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The Boolean, if this is a Boolean.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The number as a `Double`, if this is a number.
    public var doubleValue: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The number as an `Int`, if this is a number with an integral value that fits.
    public var intValue: Int? {
        switch self {
        case .integer(let value): return Int(exactly: value)
        case .double(let value): return value.rounded(.towardZero) == value ? Int(exactly: value) : nil
        default: return nil
        }
    }

    /// The elements, if this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members, if this is an object.
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The member of an object with the given key; `nil` for other values or a missing key.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// A short name of the value's kind, for error messages ("a string", "an object", …).
    public var kindDescription: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .integer, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements.map { (key: $0.0, value: $0.1) }, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue {
    /// A number value: an integer when `value` is integral and fits in 64 bits, else a double.
    public static func number(_ value: Double) -> JSONValue {
        if value.rounded(.towardZero) == value, let integer = Int64(exactly: value) {
            return .integer(integer)
        }
        return .double(value)
    }
}

extension JSONValue {
    /// An object of the members of `dictionary`. Disfavoured: a dictionary literal makes the
    /// ``JSONObject`` itself, without a dictionary (and its hashing) in between.
    @_disfavoredOverload
    public static func object(_ dictionary: [String: JSONValue]) -> JSONValue {
        .object(JSONObject(dictionary))
    }
}
