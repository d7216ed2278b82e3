/// The rules of an object's members in key order: the members of a pushed record (in key order
/// too) are walked beside them, where the rules in order would look up every key they list (an
/// annotation's rules list its type's members and every optional member of all annotations, most
/// of them absent).
///
/// Errors come out in the order of the rules, as with ``FieldRule/check(_:in:at:into:)``.
struct MemberRules: Sendable {
    let fields: [FieldRule]
    /// The keys of `fields` in order, each with its rule's position in `fields`; `nil` when a key
    /// has more than one rule.
    private let positions: [(key: String, position: Int)]?
    private let requiredCount: Int

    init(_ fields: [FieldRule]) {
        self.fields = fields
        let positions = fields.enumerated().map { (key: $1.key, position: $0) }.sorted { $0.key < $1.key }
        let isUnique = zip(positions, positions.dropFirst()).allSatisfy { $0.key != $1.key }
        self.positions = isUnique ? positions : nil
        self.requiredCount = fields.count { $0.isRequired }
    }

    func check(
        _ members: JSONObject, at path: @autoclosure () -> JSONPath, into errors: inout [InstantJSONError]
    ) {
        guard let positions, members.count < fields.count else {
            return FieldRule.check(fields, in: members, at: path(), into: &errors)
        }
        let start = errors.count
        var requiredPresent = 0
        var next = 0
        for (key, value) in members {
            while next < positions.count, positions[next].key < key { next += 1 }
            guard next < positions.count, positions[next].key == key else { continue }
            let position = positions[next].position
            if fields[position].isRequired { requiredPresent += 1 }
            FieldRule.check(fields[position], value: value, at: path(), into: &errors)
        }
        guard requiredPresent < requiredCount || errors.count > start else { return }
        // Something is wrong: the errors again, in the order of the rules.
        errors.removeSubrange(start...)
        FieldRule.check(fields, in: members, at: path(), into: &errors)
    }
}
