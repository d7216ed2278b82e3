/// What a pushed `put` says about its record's group (the `group` member of a change in
/// docs/PROTOCOL.md), shared by the server and the SDK.
///
/// The member's absence and `null` mean different things: absent keeps the group (a new record
/// gets the token's `default_group`); `null` puts the record in no group.
public enum GroupAssignment: Sendable, Hashable {
    /// No `group` member: the record keeps its group; a new record gets the token's default.
    case unchanged
    /// `"group": NAME` or `"group": null`: the record goes to that group, or to none.
    case assigned(String?)

    /// Reads the `group` member of a change: `nil` when it is neither absent, a string nor `null`.
    public init?(member: JSONValue?) {
        switch member {
        case nil: self = .unchanged
        case .null?: self = .assigned(nil)
        case .string(let name)?: self = .assigned(name)
        default: return nil
        }
    }

    /// The `group` member to write: `nil` when the change has none.
    public var member: JSONValue? {
        switch self {
        case .unchanged: nil
        case .assigned(let name): name.map(JSONValue.string) ?? .null
        }
    }
}
