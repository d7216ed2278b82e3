/// What a JSON value must look like: the building block of the record schemas.
///
/// Enumerations of the format (blend modes, icons, stamp types, …) are checked as strings only:
/// a value that this version does not know is kept, so that records of newer peers survive.
enum ValueRule: Sendable {
    case any
    case string
    case bool
    case integer(minimum: Int64?)
    case number(minimum: Double?, maximum: Double?)
    /// `#RRGGBB`.
    case color
    /// ISO 8601 date-time.
    case date
    /// An array of exactly `count` numbers (bbox, rect, point).
    case numbers(count: Int, meaning: String)
    /// One of the listed integers.
    case integerIn([Int64])
    /// One of the listed strings (only for closed sets such as `v`).
    case stringIn([String])
    indirect case array(ValueRule)
    case object([FieldRule])
    /// An object or `null` with any members (customData).
    case freeObject
    /// Either of two rules.
    indirect case either(ValueRule, ValueRule, meaning: String)
    case text(version: Int)
    case action

    static let nonNegativeInteger = ValueRule.integer(minimum: 0)
    static let unitInterval = ValueRule.number(minimum: 0, maximum: 1)
    static let point = ValueRule.numbers(count: 2, meaning: "a point [x, y]")
    static let rect = ValueRule.numbers(count: 4, meaning: "a rectangle [left, top, width, height]")
    /// The members of a version 2 text.
    static let textMembers: [FieldRule] = [.required("format", .string), .required("value", .string)]

    /// Appends what is wrong with `value` to `errors`. The path is rendered only for an error:
    /// most values are fine, and records have many.
    func check(_ value: JSONValue, at path: @autoclosure () -> JSONPath, into errors: inout [InstantJSONError]) {
        func wrongType(_ expected: String) {
            errors.append(
                InstantJSONError(
                    code: .wrongType, path: path().rendered,
                    rule: "expected \(expected), found \(value.kindDescription)")
            )
        }
        func invalid(_ rule: String) {
            errors.append(InstantJSONError(code: .invalidValue, path: path().rendered, rule: rule))
        }
        switch self {
        case .any:
            return
        case .string:
            if value.stringValue == nil { wrongType("a string") }
        case .bool:
            if value.boolValue == nil { wrongType("a boolean") }
        case .integer(let minimum):
            guard value.doubleValue != nil else { return wrongType("an integer") }
            guard case .integer(let integer) = value else { return invalid("expected an integer") }
            if let minimum, integer < minimum { invalid("expected an integer ≥ \(minimum), found \(integer)") }
        case .number(let minimum, let maximum):
            guard let number = value.doubleValue else { return wrongType("a number") }
            if let minimum, let maximum, !(minimum...maximum).contains(number) {
                invalid("expected a number between \(Self.format(minimum)) and \(Self.format(maximum))")
            } else if let minimum, number < minimum {
                invalid("expected a number ≥ \(Self.format(minimum))")
            }
        case .color:
            guard let string = value.stringValue else { return wrongType("a color string like \"#RRGGBB\"") }
            if RGBColor(hex: string) == nil {
                invalid("expected a color like \"#RRGGBB\", found \"\(string.prefix(20))\"")
            }
        case .date:
            guard let string = value.stringValue else { return wrongType("an ISO 8601 date-time string") }
            if InstantDate.parse(string) == nil {
                invalid(
                    "expected an ISO 8601 date-time such as \"2018-07-03T13:53:03Z\", found \"\(string.prefix(40))\"")
            }
        case .numbers(let count, let meaning):
            guard let elements = value.arrayValue else { return wrongType("\(meaning): an array of \(count) numbers") }
            if elements.count != count || elements.contains(where: { $0.doubleValue == nil }) {
                invalid("expected \(count) numbers (\(meaning))")
            }
        case .integerIn(let allowed):
            guard case .integer(let integer) = value, allowed.contains(integer) else {
                return invalid("expected one of \(allowed.map(String.init).joined(separator: ", "))")
            }
        case .stringIn(let allowed):
            guard let string = value.stringValue else { return wrongType("a string") }
            if !allowed.contains(string) {
                invalid(
                    "expected one of \(allowed.map { "\"\($0)\"" }.joined(separator: ", ")), found \"\(string.prefix(40))\""
                )
            }
        case .array(let element):
            guard let elements = value.arrayValue else { return wrongType("an array") }
            for (position, item) in elements.enumerated() {
                element.check(item, at: path().appending(index: position), into: &errors)
            }
        case .object(let fields):
            guard let members = value.objectValue else { return wrongType("an object") }
            FieldRule.check(fields, in: members, at: path(), into: &errors)
        case .freeObject:
            if value.objectValue == nil && !value.isNull { wrongType("an object or null") }
        case .either(let first, let second, let meaning):
            var firstErrors: [InstantJSONError] = []
            first.check(value, at: path(), into: &firstErrors)
            if firstErrors.isEmpty { return }
            var secondErrors: [InstantJSONError] = []
            second.check(value, at: path(), into: &secondErrors)
            if secondErrors.isEmpty { return }
            wrongType(meaning)
        case .text(let version):
            if version < 2 {
                if value.stringValue == nil { wrongType("a string (text of a version 1 record)") }
                return
            }
            guard let members = value.objectValue else {
                return wrongType("an object {\"format\": \"plain\" or \"xhtml\", \"value\": string}")
            }
            FieldRule.check(Self.textMembers, in: members, at: path(), into: &errors)
        case .action:
            Action.check(value, at: path(), depth: 0, into: &errors)
        }
    }

    static func format(_ number: Double) -> String {
        number.rounded() == number ? String(Int64(number)) : String(number)
    }
}

/// A member of a JSON object: its key, whether it must be present, and what its value must look like.
final class FieldRule: Sendable {
    let key: String
    let isRequired: Bool
    let rule: ValueRule

    init(key: String, isRequired: Bool, rule: ValueRule) {
        self.key = key
        self.isRequired = isRequired
        self.rule = rule
    }

    static func required(_ key: String, _ rule: ValueRule) -> FieldRule {
        FieldRule(key: key, isRequired: true, rule: rule)
    }

    static func optional(_ key: String, _ rule: ValueRule) -> FieldRule {
        FieldRule(key: key, isRequired: false, rule: rule)
    }

    /// Checks the members of an object against the rules; members without a rule are allowed
    /// (they are kept as they are).
    static func check(
        _ rules: [FieldRule], in members: JSONObject, at path: @autoclosure () -> JSONPath,
        into errors: inout [InstantJSONError]
    ) {
        for field in rules {
            check(field, value: members[field.key], at: path(), into: &errors)
        }
    }

    /// Checks one member's value, `nil` when the object lacks it.
    static func check(
        _ field: FieldRule, value: JSONValue?, at path: @autoclosure () -> JSONPath,
        into errors: inout [InstantJSONError]
    ) {
        guard let value else {
            if field.isRequired {
                errors.append(
                    InstantJSONError(
                        code: .missingKey, path: path().appending(key: field.key).rendered,
                        rule: "required key is missing"))
            }
            return
        }
        field.rule.check(value, at: path().appending(key: field.key), into: &errors)
    }
}
