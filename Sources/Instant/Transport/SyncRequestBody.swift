import InstantJSON

/// The body of a sync request (`POST …/sync` in docs/PROTOCOL.md), built in this one place: the
/// client's id, the revision it has, and the push it sends, if any.
struct SyncRequestBody: Sendable {
    var clientID: String
    /// The revision the client has applied: the push's base when there is a push.
    var baseRevision: Int64
    var push: PendingPush?

    /// A request that sends `push` from its base revision.
    init(clientID: String, push: PendingPush) {
        self.clientID = clientID
        baseRevision = push.baseRevision
        self.push = push
    }

    /// A request that sends nothing and asks for what changed after `baseRevision`.
    init(clientID: String, baseRevision: Int64) {
        self.clientID = clientID
        self.baseRevision = baseRevision
        push = nil
    }

    var json: JSONValue {
        var body: JSONObject = [
            "clientId": .string(clientID), "baseRevision": .integer(baseRevision),
            "changes": .array(push?.changes.map(\.wireValue) ?? []),
        ]
        if let push { body["pushId"] = .integer(push.pushID) }
        return .object(body)
    }
}
