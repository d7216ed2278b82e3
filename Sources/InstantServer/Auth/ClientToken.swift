import Foundation

/// The verified claims of a client JWT.
public struct ClientToken: Sendable, Hashable {
    /// The document the token grants access to (`document_id`).
    public var documentID: String
    /// The layer the token grants access to (`layer`); `""` is the default layer.
    public var layer: String
    /// The granted permissions (`permissions`): `read-document`, `write`, `download`.
    public var permissions: Set<String>
    /// The user (`user_id`), if given.
    public var userID: String?
    /// The group of new records (`default_group`), if given.
    public var defaultGroup: String?
    /// The creator name stamped on new records (`creator_name`), if given.
    public var creatorName: String?
    /// The collaboration permission rules (`collaboration_permissions`), if given; without them,
    /// `write` allows every change.
    public var collaborationPermissions: CollaborationPermissions?
    /// The token id (`jti`), if given; revocation works by this id.
    public var tokenID: String?
    /// When the token expires (`exp`).
    public var expiresAt: Date
    /// What tells this token apart from others for per-token limits: its `jti`, or a digest of
    /// its text for tokens without one.
    public var key: String

    /// Creates a token value.
    public init(
        documentID: String,
        layer: String = "",
        permissions: Set<String>,
        userID: String? = nil,
        defaultGroup: String? = nil,
        creatorName: String? = nil,
        collaborationPermissions: CollaborationPermissions? = nil,
        tokenID: String? = nil,
        expiresAt: Date,
        key: String? = nil
    ) {
        self.documentID = documentID
        self.layer = layer
        self.permissions = permissions
        self.userID = userID
        self.defaultGroup = defaultGroup
        self.creatorName = creatorName
        self.collaborationPermissions = collaborationPermissions
        self.tokenID = tokenID
        self.expiresAt = expiresAt
        self.key = key ?? tokenID.map { "jti:\($0)" } ?? "claims:\(documentID)|\(layer)|\(userID ?? "")|\(expiresAt)"
    }

    /// The time until the token expires, never more than `limit` and never negative: `exp` may be
    /// any number, and a wait for it must not overflow a `Duration`.
    public func timeLeft(atMost limit: Duration, now: Date = Date()) -> Duration {
        let seconds = expiresAt.timeIntervalSince(now)
        guard seconds > 0 else { return .zero }
        let limitSeconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) * 1e-18
        return seconds >= limitSeconds ? limit : .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    /// Whether the token grants a permission.
    public func allows(_ permission: String) -> Bool { permissions.contains(permission) }
}
