import InstantJSON

/// The body of `POST /i/d/{documentID}[/l/{layer}]/sync`: a client's pending changes and the
/// revision it has.
struct SyncRequest: Sendable {
    /// One pending change of the client.
    struct Change: Sendable {
        enum Operation: Sendable { case put(JSONValue, group: GroupAssignment), delete }

        var kind: RecordKind
        var id: String
        var operation: Operation
    }

    /// The kinds a client may push.
    static let pushableKinds: [RecordKind] = [.annotation, .comment, .formFieldValue, .bookmark]

    /// The client's stable id, one per local store.
    var clientID: String
    /// The push's number; required when there are changes.
    var pushID: Int64?
    /// The revision the client has applied.
    var baseRevision: Int64
    /// The changes, in the order the client made them.
    var changes: [Change]

    /// The longest client id, in UTF-8 bytes: a UUID or a ULID has 36 or 26.
    static let maximumClientIDLength = 128

    /// Reads a request body.
    /// - Parameter maxChanges: The most changes a push may carry.
    /// - Throws: ``APIError`` (400) naming the first bad field; 413 for more than `maxChanges` changes.
    init(_ body: JSONValue, maxChanges: Int) throws(APIError) {
        guard body.objectValue != nil else { throw .badRequest("The sync request must be a JSON object.") }
        guard let clientID = body["clientId"]?.stringValue else {
            throw .badRequest("clientId: expected the client's id, a string.")
        }
        try Identifiers.validate(clientID, what: "clientId")
        guard clientID.utf8.count <= Self.maximumClientIDLength else {
            throw .badRequest(
                "clientId: longer than \(Self.maximumClientIDLength) bytes; use a random UUID or ULID per local store.")
        }
        self.clientID = clientID
        guard let base = body["baseRevision"]?.integerValue, base >= 0 else {
            throw .badRequest("baseRevision: expected the last revision the client applied, an integer ≥ 0.")
        }
        baseRevision = base
        if let push = body["pushId"], push != .null {
            guard let value = push.integerValue, value >= 1 else {
                throw .badRequest("pushId: expected an integer ≥ 1, increasing with every push of this client.")
            }
            pushID = value
        }
        let items = body["changes"] ?? .array([])
        guard let list = items.arrayValue else { throw .badRequest("changes: expected an array.") }
        guard list.count <= maxChanges else {
            throw APIError(
                .contentTooLarge,
                "changes: \(list.count) changes, more than the \(maxChanges) one push may carry "
                    + "(--max-changes-per-push); send them in several pushes."
            )
        }
        changes = try list.enumerated().map { index, item throws(APIError) in try Self.change(item, index: index) }
        if !changes.isEmpty, pushID == nil {
            throw .badRequest("pushId: a push with changes needs a pushId, so that a retry is not applied twice.")
        }
    }

    private static func change(_ item: JSONValue, index: Int) throws(APIError) -> Change {
        // Named in errors only: a push carries up to thousands of changes.
        var path: String { "changes[\(index)]" }
        guard case .object(let members) = item else {
            throw .badRequest("\(path): expected an object {op, kind, id, ...}.")
        }
        // The members taken in one pass, comparing keys rather than hashing each one looked up:
        // this runs for every change of every push.
        var field: (kind: JSONValue?, id: JSONValue?, op: JSONValue?, content: JSONValue?, group: JSONValue?)
        for (key, value) in members {
            switch key {
            case "kind": field.kind = value
            case "id": field.id = value
            case "op": field.op = value
            case "content": field.content = value
            case "group": field.group = value
            default: continue
            }
        }
        guard let kindName = field.kind?.stringValue, case let kind = RecordKind(rawValue: kindName),
            pushableKinds.contains(kind)
        else {
            throw .badRequest(
                "\(path).kind: expected one of \(pushableKinds.map { "\"\($0)\"" }.joined(separator: ", "))."
            )
        }
        guard let id = field.id?.stringValue else { throw .badRequest("\(path).id: expected the record id.") }
        try Identifiers.validate(id, what: "\(path).id")
        switch field.op?.stringValue {
        case "put":
            guard let content = field.content, content.objectValue != nil else {
                throw .badRequest("\(path).content: a put needs the full Instant JSON record, an object.")
            }
            guard let group = GroupAssignment(member: field.group) else {
                throw .badRequest("\(path).group: expected a string or null.")
            }
            return Change(kind: kind, id: id, operation: .put(content, group: group))
        case "delete":
            return Change(kind: kind, id: id, operation: .delete)
        default:
            throw .badRequest("\(path).op: expected \"put\" or \"delete\".")
        }
    }
}
