/// The rules of an object's members with an index by key: the members of a pushed record are
/// checked with one lookup each, where the rules in order would look up every key they list
/// (an annotation's rules list its type's members and every optional member of all annotations,
/// most of them absent).
///
/// Errors come out in the order of the rules, as with ``FieldRule/check(_:in:at:into:)``.
struct MemberRules: Sendable {
    let fields: [FieldRule]
    /// The position of each key in `fields`; `nil` when a key has more than one rule.
    private let positions: [String: Int]?
    private let requiredCount: Int

    init(_ fields: [FieldRule]) {
        self.fields = fields
        let positions = Dictionary(fields.enumerated().map { ($1.key, $0) }, uniquingKeysWith: { first, _ in first })
        self.positions = positions.count == fields.count ? positions : nil
        self.requiredCount = fields.count { $0.isRequired }
    }

    func check(
        _ members: [String: JSONValue], at path: @autoclosure () -> JSONPath, into errors: inout [InstantJSONError]
    ) {
        guard let positions, members.count < fields.count else {
            return FieldRule.check(fields, in: members, at: path(), into: &errors)
        }
        let start = errors.count
        var requiredPresent = 0
        for (key, value) in members {
            guard let position = positions[key] else { continue }
            if fields[position].isRequired { requiredPresent += 1 }
            FieldRule.check(fields[position], value: value, at: path(), into: &errors)
        }
        guard requiredPresent < requiredCount || errors.count > start else { return }
        // Something is wrong: the errors again, in the order of the rules.
        errors.removeSubrange(start...)
        FieldRule.check(fields, in: members, at: path(), into: &errors)
    }
}
