import Foundation
import Hummingbird
import InstantJSON
import InstantTesting
import Testing

@testable import InstantServer

/// A document on a live server with an ES256 key, and sync clients on its layers.
struct SyncFixture {
    let directory: TemporaryDirectory
    let key: TestSigningKey
    var harness: ServerHarness

    init(longPollTimeout: Duration = .seconds(50)) async throws {
        directory = try TemporaryDirectory()
        key = try await TestSigningKey(.es256)
        harness = ServerHarness(directory: directory.url)
        harness.jwt = key.jwtConfiguration
        harness.longPollTimeout = longPollTimeout
    }

    /// A token for the document with the given claims.
    func token(
        _ documentID: String,
        layer: String? = nil,
        user: String? = "alice",
        permissions: [String] = ["read-document", "write"],
        defaultGroup: String? = nil,
        creatorName: String? = nil,
        collaboration: [String]? = nil,
        expiresIn: TimeInterval = 3600,
        tokenID: String? = nil
    ) async throws -> String {
        try await key.token(
            ClientClaims(
                documentID: documentID,
                layer: layer,
                permissions: permissions,
                userID: user,
                defaultGroup: defaultGroup,
                creatorName: creatorName,
                collaborationPermissions: collaboration,
                expiration: Date().addingTimeInterval(expiresIn),
                tokenID: tokenID
            )
        )
    }

    /// Runs `body` on a live server with a one-page document: the client, the server's port, the
    /// document id and a token of alice for it (the defaults of ``token(_:layer:user:permissions:defaultGroup:creatorName:collaboration:expiresIn:tokenID:)``).
    /// The fixture's directory is removed afterwards.
    func onDocument(
        _ body: @Sendable (ServerHarness.Client, _ port: Int, _ id: String, _ token: String) async throws -> Void
    ) async throws {
        defer { directory.remove() }
        try await harness.run { client in
            let port = try #require(client.client.port)
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            try await body(client, port, id, try await token(id))
        }
    }
}

/// One simulated client of the sync protocol: its id, next push id and base revision.
final class SyncClient: @unchecked Sendable {
    let client: ServerHarness.Client
    let path: String
    var token: String
    let clientID: String
    var nextPushID: Int64 = 1
    var baseRevision: Int64 = 0

    init(_ client: ServerHarness.Client, documentID: String, layer: String? = nil, token: String, clientID: String) {
        self.client = client
        self.path = layer.map { "/i/d/\(documentID)/l/\($0)" } ?? "/i/d/\(documentID)"
        self.token = token
        self.clientID = clientID
    }

    /// Sends one push (a pull if `changes` is empty) and adopts the answered revision.
    @discardableResult
    func sync(_ changes: [JSONValue] = [], pushID: Int64? = nil, base: Int64? = nil) async throws
        -> ServerHarness.Client.Reply
    {
        var body: JSONObject = [
            "clientId": .string(clientID),
            "baseRevision": .integer(base ?? baseRevision),
            "changes": .array(changes),
        ]
        if !changes.isEmpty {
            let id = pushID ?? nextPushID
            body["pushId"] = .integer(id)
            nextPushID = max(nextPushID, id &+ 1)
        }
        let reply = try await client.request(
            .post, "\(path)/sync",
            headers: [.authorization: "Token token=\"\(token)\"", .contentType: "application/json"],
            body: JSONValue.object(body).encoded(),
            apiToken: nil
        )
        if reply.status == .ok, let revision = reply.json?["revision"]?.integerValue { baseRevision = revision }
        return reply
    }
}

/// A put change of a sync request.
func put(_ id: String, _ content: JSONValue, kind: String = "annotation", group: String? = nil) -> JSONValue {
    put(id, content, kind: kind, assigning: group.map { .assigned($0) } ?? .unchanged)
}

/// A put change of a sync request with its `group` member as `assignment` says (`null` for no group).
func put(_ id: String, _ content: JSONValue, kind: String = "annotation", assigning assignment: GroupAssignment)
    -> JSONValue
{
    var change: JSONObject = ["op": "put", "kind": .string(kind), "id": .string(id), "content": content]
    if let member = assignment.member { change["group"] = member }
    return .object(change)
}

/// A delete change of a sync request.
func delete(_ id: String, kind: String = "annotation") -> JSONValue {
    ["op": "delete", "kind": .string(kind), "id": .string(id)]
}

/// A comment's Instant JSON content on a thread.
func commentContent(root: String, text: String = "a comment") -> JSONValue {
    [
        "v": 2, "type": "pspdfkit/comment", "rootId": .string(root), "pageIndex": 0,
        "text": ["format": "plain", "value": .string(text)],
    ]
}

extension ServerHarness.Client.Reply {
    /// The `records` of a sync answer by id.
    var records: [String: JSONValue] {
        Dictionary(
            (json?["records"]?.arrayValue ?? []).compactMap { record in record["id"]?.stringValue.map { ($0, record) }
            },
            uniquingKeysWith: { _, last in last }
        )
    }

    /// The rejection codes of a sync answer by id.
    var rejections: [String: String] {
        Dictionary(
            (json?["rejected"]?.arrayValue ?? []).compactMap { item in
                guard let id = item["id"]?.stringValue, let code = item["code"]?.stringValue else { return nil }
                return (id, code)
            },
            uniquingKeysWith: { first, _ in first }
        )
    }
}
