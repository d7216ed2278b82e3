import Foundation
import InstantJSON

/// Conveniences the routes use on top of InstantJSON's `JSONValue`.
extension JSONValue {
    /// Parses UTF-8 JSON bytes with InstantJSON's parser.
    static func parse(_ data: Data) throws(InstantJSONError) -> JSONValue {
        try JSONValue(parsing: data)
    }

    /// The UTF-8 JSON bytes of the value, keys sorted.
    func encoded() -> Data {
        serialized()
    }

    /// The value as a whole number, if it is one (integers, and doubles without a fraction).
    var integerValue: Int64? {
        switch self {
        case .integer(let value): return value
        case .double(let value) where value.rounded() == value && abs(value) < 9e15: return Int64(value)
        default: return nil
        }
    }

    /// Whether the value is a number.
    var isNumber: Bool {
        switch self {
        case .integer, .double: true
        default: false
        }
    }

    /// A string, or `null` when `nil`.
    static func optional(_ string: String?) -> JSONValue {
        string.map(JSONValue.string) ?? .null
    }
}
