import Foundation

/// A record of the Instant JSON format: an annotation, bookmark, form field, form field value,
/// comment or action.
///
/// A record keeps every member of its JSON object, the keys this version does not know included,
/// so decoding and encoding again gives back the same JSON value. Typed properties read and write
/// those members; `subscript(key:)` reaches any member directly.
public protocol InstantRecord: Hashable, Sendable, Codable {
    /// The record's members, exactly as read or set.
    var json: JSONObject { get set }

    /// Wraps members without checking them. Use ``init(json:)`` for input from outside.
    init(uncheckedJSON: JSONObject)

    /// Every problem of `value` as a record of this type, each naming its path below `path`.
    static func validationErrors(of value: JSONValue, at path: String) -> [InstantJSONError]
}

extension InstantRecord {
    /// A record from a JSON value, checked against the format.
    ///
    /// - Throws: the first ``InstantJSONError`` found, naming the path and the rule broken.
    public init(json value: JSONValue) throws(InstantJSONError) {
        if let error = Self.validationErrors(of: value, at: "").first { throw error }
        self.init(uncheckedJSON: value.objectValue ?? [:])
    }

    /// A record from UTF-8 JSON bytes, checked against the format.
    public init(parsing data: some DataProtocol) throws(InstantJSONError) {
        try self.init(json: JSONValue(parsing: data))
    }

    /// The record as a JSON value.
    public var jsonValue: JSONValue { .object(json) }

    /// The record as compact UTF-8 JSON with sorted keys.
    public func serialized() -> Data { jsonValue.serialized() }

    /// Any member of the record; setting `nil` removes it.
    public subscript(key: String) -> JSONValue? {
        get { json[key] }
        set { json[key] = newValue }
    }

    public init(from decoder: any Decoder) throws {
        let value = try JSONValue(from: decoder)
        let errors = Self.validationErrors(of: value, at: "")
        if let error = errors.first {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath, debugDescription: error.description, underlyingError: error))
        }
        self.init(uncheckedJSON: value.objectValue ?? [:])
    }

    public func encode(to encoder: any Encoder) throws {
        try jsonValue.encode(to: encoder)
    }

    // MARK: Typed member access for the record types

    func string(_ key: String) -> String? { json[key]?.stringValue }
    func int(_ key: String) -> Int? { json[key]?.intValue }
    func double(_ key: String) -> Double? { json[key]?.doubleValue }
    func bool(_ key: String) -> Bool? { json[key]?.boolValue }
    func color(_ key: String) -> RGBColor? { string(key).flatMap(RGBColor.init(hex:)) }

    mutating func set(_ key: String, _ value: String?) { json[key] = value.map(JSONValue.string) }
    mutating func set(_ key: String, _ value: Int?) { json[key] = value.map { .integer(Int64($0)) } }
    mutating func set(_ key: String, _ value: Double?) { json[key] = value.map(JSONValue.number) }
    mutating func set(_ key: String, _ value: Bool?) { json[key] = value.map(JSONValue.bool) }
    mutating func set(_ key: String, _ value: RGBColor?) { json[key] = value.map { .string($0.hex) } }
}

/// The checks shared by every record type: the value must be an object and satisfy the rules.
func objectErrors(_ value: JSONValue, at path: String, rules: [FieldRule]) -> [InstantJSONError] {
    var errors: [InstantJSONError] = []
    ValueRule.object(rules).check(value, at: JSONPath(path), into: &errors)
    return errors
}

/// The same checks with the rules indexed by key (the record types checked most).
func objectErrors(_ value: JSONValue, at path: String, rules: MemberRules) -> [InstantJSONError] {
    guard let members = value.objectValue else { return objectErrors(value, at: path, rules: rules.fields) }
    var errors: [InstantJSONError] = []
    rules.check(members, at: JSONPath(path), into: &errors)
    return errors
}

/// A string value of an open set of the format (types, blend modes, icons, …): values that this
/// version does not know are kept as they are.
public protocol WireEnum: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral,
    CustomStringConvertible
where RawValue == String {
    init(rawValue: String)
}

extension WireEnum {
    public init(stringLiteral value: String) { self.init(rawValue: value) }
    public var description: String { rawValue }
}
