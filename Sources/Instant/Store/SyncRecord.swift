import InstantJSON

/// A record as the server sends it (snapshot and sync answers): full content or a tombstone.
struct SyncRecord: Sendable, Hashable {
    var id: String
    var kind: String
    var revision: Int64
    /// The Instant JSON object; `nil` for a tombstone.
    var content: JSONValue?
    var group: String?
    var createdBy: String?
    var updatedBy: String?

    /// Reads one element of a `records` array.
    init(_ value: JSONValue) throws(InstantError) {
        guard let id = value["id"]?.stringValue, let kind = value["kind"]?.stringValue else {
            throw InstantError(.invalidServerResponse, "The server sent a record without an id or kind.")
        }
        self.id = id
        self.kind = kind
        revision = value["revision"]?.intValue.map(Int64.init) ?? 0
        let deleted = value["deleted"]?.boolValue == true
        content = deleted ? nil : value["content"].flatMap { $0.objectValue == nil ? nil : $0 }
        group = value["group"]?.stringValue
        createdBy = value["createdBy"]?.stringValue
        updatedBy = value["updatedBy"]?.stringValue
    }
}

/// One change of a push: the full record or a deletion, with the local version it captured.
struct PushedChange: Sendable, Hashable {
    var id: String
    var kind: String
    /// The record to put; `nil` for a deletion.
    var content: JSONValue?
    var group: GroupAssignment
    /// The record's local version when the push was made; a later edit has a higher one.
    var version: Int64

    var wireValue: JSONValue {
        var change: JSONObject = [
            "op": .string(content == nil ? "delete" : "put"), "kind": .string(kind), "id": .string(id),
        ]
        if let content { change["content"] = content }
        if content != nil, let member = group.member { change["group"] = member }
        return .object(change)
    }
}

/// The batch of changes in flight: sent (or about to be) under one push id, and resent unchanged
/// until an answer acknowledges it.
struct PendingPush: Sendable, Hashable {
    var pushID: Int64
    var baseRevision: Int64
    var changes: [PushedChange]
}

/// A sync answer as the client uses it.
struct SyncAnswer: Sendable {
    var revision: Int64
    var acknowledgedPushID: Int64?
    var reset: Bool
    var records: [SyncRecord]
    var rejections: [(id: String, code: String, reason: String)]

    /// The answer a pull would get: `records` changed up to `revision`.
    init(revision: Int64, records: [SyncRecord]) {
        self.revision = revision
        self.acknowledgedPushID = nil
        self.reset = false
        self.records = records
        self.rejections = []
    }

    init(_ value: JSONValue) throws(InstantError) {
        guard let revision = value["revision"]?.intValue else {
            throw InstantError(.invalidServerResponse, "The server's sync answer has no revision.")
        }
        self.revision = Int64(revision)
        acknowledgedPushID = value["pushId"]?.intValue.map(Int64.init)
        reset = value["reset"]?.boolValue == true
        records = try (value["records"]?.arrayValue ?? []).map { item throws(InstantError) in try SyncRecord(item) }
        rejections = (value["rejected"]?.arrayValue ?? []).compactMap { item in
            guard let id = item["id"]?.stringValue else { return nil }
            return (id, item["code"]?.stringValue ?? "", item["reason"]?.stringValue ?? "")
        }
    }
}
