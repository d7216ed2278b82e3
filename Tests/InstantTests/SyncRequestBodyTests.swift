import InstantJSON
import Testing

@testable import Instant

/// The one encoder of sync request bodies, against docs/PROTOCOL.md.
@Suite("Sync request bodies", .timeLimit(.minutes(10)))
struct SyncRequestBodyTests {
    @Test func aPushCarriesItsIDBaseAndChanges() throws {
        let push = PendingPush(
            pushID: 7, baseRevision: 41,
            changes: [
                PushedChange(id: "a", kind: "annotation", content: ["v": 2], group: .assigned(nil), version: 3),
                PushedChange(id: "b", kind: "comment", content: nil, group: .unchanged, version: 1),
            ])
        let body = SyncRequestBody(clientID: "client-1", push: push).json
        #expect(body["clientId"] == "client-1")
        #expect(body["baseRevision"] == 41)
        #expect(body["pushId"] == 7)
        let changes = try #require(body["changes"]?.arrayValue)
        #expect(changes[0] == ["op": "put", "kind": "annotation", "id": "a", "content": ["v": 2], "group": .null])
        #expect(changes[1] == ["op": "delete", "kind": "comment", "id": "b"])
    }

    @Test func aPullCarriesNoPush() {
        let body = SyncRequestBody(clientID: "client-1", baseRevision: 9).json
        #expect(body == ["clientId": "client-1", "baseRevision": 9, "changes": []])
    }
}
