/// The `collaboration_permissions` claim of a client token: which records a user may view, edit,
/// delete, reply to, regroup or fill.
///
/// A rule is `<content>:<action>:<scope>`, for example `annotations:edit:self` or
/// `comments:view:group=reviewers`. Once a token carries the claim, everything no rule grants is
/// denied. Every action other than `view` also needs `view` on the same record: nobody changes
/// what they cannot see.
public struct CollaborationPermissions: Sendable, Hashable {
    /// What a rule is about.
    public struct Content: RawRepresentable, Sendable, Hashable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Annotations.
        public static let annotations = Content(rawValue: "annotations")
        /// Comments.
        public static let comments = Content(rawValue: "comments")
        /// Form fields and their values.
        public static let formFields = Content(rawValue: "form-fields")
        static let all: [Content] = [.annotations, .comments, .formFields]
    }

    /// What a rule allows.
    public struct Action: RawRepresentable, Sendable, Hashable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// See the record (otherwise it reaches the user as a tombstone).
        public static let view = Action(rawValue: "view")
        /// Create or change the record.
        public static let edit = Action(rawValue: "edit")
        /// Delete the record.
        public static let delete = Action(rawValue: "delete")
        /// Add comments to the thread of the record.
        public static let reply = Action(rawValue: "reply")
        /// Give the record another group.
        public static let setGroup = Action(rawValue: "set-group")
        /// Fill in the value of a form field.
        public static let fill = Action(rawValue: "fill")
        static let all: [Action] = [.view, .edit, .delete, .reply, .setGroup, .fill]
    }

    /// Which records a rule covers.
    public enum Scope: Sendable, Hashable {
        /// Every record.
        case all
        /// The records the user created.
        case ownRecords
        /// The records of a group.
        case group(String)
        /// The records a given user created.
        case createdBy(String)
    }

    /// One rule of the claim.
    public struct Rule: Sendable, Hashable {
        public var content: Content
        public var action: Action
        public var scope: Scope
    }

    /// The rules, in the order of the claim.
    public var rules: [Rule]

    /// Parses the claim.
    /// - Throws: ``ClientTokenError`` (``ClientTokenError/Code/malformed``) naming the first rule
    ///   that is not `<annotations|comments|form-fields>:<action>:<scope>`.
    public init(claim: [String]) throws(ClientTokenError) {
        rules = try claim.enumerated().map { index, text throws(ClientTokenError) in
            let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            let content = parts.first.map(Content.init(rawValue:))
            let action = parts.count > 1 ? Action(rawValue: parts[1]) : nil
            let scope = parts.count > 2 ? Self.scope(parts[2]) : nil
            guard let content, Content.all.contains(content), let action, Action.all.contains(action),
                let scope
            else {
                throw ClientTokenError(
                    .malformed,
                    "collaboration_permissions[\(index)] '\(text)' is not '<annotations|comments|form-fields>:"
                        + "<view|edit|delete|reply|set-group|fill>:<all|self|group=NAME|createdBy=USER>'."
                )
            }
            return Rule(content: content, action: action, scope: scope)
        }
    }

    private static func scope(_ text: String) -> Scope? {
        switch text {
        case "all": return .all
        case "self": return .ownRecords
        default:
            if text.hasPrefix("group="), text.count > 6 { return .group(String(text.dropFirst(6))) }
            if text.hasPrefix("createdBy="), text.count > 10 { return .createdBy(String(text.dropFirst(10))) }
            return nil
        }
    }

    /// The facts about a record that rules look at.
    public struct Subject: Sendable, Hashable {
        /// Who created the record.
        public var createdBy: String?
        /// The record's group.
        public var group: String?

        public init(createdBy: String?, group: String?) {
            self.createdBy = createdBy
            self.group = group
        }
    }

    /// Whether `user` may do `action` to a record of `content` described by `subject`.
    /// Actions other than `view` also need `view`.
    public func allows(_ action: Action, _ content: Content, _ subject: Subject, user: String?) -> Bool {
        guard grants(action, content, subject, user: user) else { return false }
        return action == .view || grants(.view, content, subject, user: user)
    }

    private func grants(_ action: Action, _ content: Content, _ subject: Subject, user: String?) -> Bool {
        rules.contains { rule in
            guard rule.content == content, rule.action == action else { return false }
            switch rule.scope {
            case .all: return true
            case .ownRecords: return user != nil && subject.createdBy == user
            case .group(let group): return subject.group == group
            case .createdBy(let creator): return subject.createdBy == creator
            }
        }
    }
}
