import Foundation
import Hummingbird
import InstantJSON
import InstantTesting
import Testing

@testable import InstantServer

@Suite("Collaboration permissions", .timeLimit(.minutes(10)))
struct CollaborationPermissionTests {
    /// One row of the matrix: with these rules, Carol's change is applied or rejected.
    struct Case: Sendable, CustomStringConvertible {
        var rules: [String]
        var change: JSONValue
        var rejected: Bool
        var permissions = ["read-document", "write"]
        var note: String
        var description: String { "\(note): \(rules)" }
    }

    // Every document starts with: "mine" (an annotation by carol in g1), "theirs" (by dave in g2),
    // "thread" (a comment marker by dave in g2) with the comment "c-theirs" (by dave), and the form
    // field value "formFieldValue:f1" (by dave in g2). Carol's token has default_group g1.
    static let view = "annotations:view:all"
    static let cases: [Case] = [
        Case(
            rules: [view, "annotations:edit:self"], change: put("new", noteContent()), rejected: false,
            note: "create, edit:self"),
        Case(rules: [view], change: put("new", noteContent()), rejected: true, note: "create without edit"),
        Case(
            rules: [view, "annotations:edit:self"], change: put("mine", noteContent()), rejected: false,
            note: "edit own"),
        Case(
            rules: [view, "annotations:edit:self"], change: put("theirs", noteContent()), rejected: true,
            note: "edit other's with self"),
        Case(
            rules: [view, "annotations:edit:group=g2"], change: put("theirs", noteContent()), rejected: false,
            note: "edit by group"),
        Case(
            rules: [view, "annotations:edit:createdBy=dave"], change: put("theirs", noteContent()), rejected: false,
            note: "edit by creator"),
        Case(
            rules: [view, "annotations:edit:createdBy=erin"], change: put("theirs", noteContent()), rejected: true,
            note: "edit, other creator"),
        Case(
            rules: ["annotations:edit:all"], change: put("mine", noteContent()), rejected: true,
            note: "edit without view"),
        Case(
            rules: ["annotations:view:group=g1", "annotations:edit:all"], change: put("theirs", noteContent()),
            rejected: true, note: "edit what is not visible"),
        Case(rules: [view, "annotations:delete:all"], change: delete("theirs"), rejected: false, note: "delete all"),
        Case(
            rules: [view, "annotations:delete:self"], change: delete("theirs"), rejected: true,
            note: "delete other's with self"),
        Case(rules: [view, "annotations:delete:self"], change: delete("mine"), rejected: false, note: "delete own"),
        Case(
            rules: [view, "annotations:edit:self"], change: put("mine", noteContent(), group: "g3"), rejected: true,
            note: "regroup without set-group"),
        Case(
            rules: [view, "annotations:edit:self", "annotations:set-group:self"],
            change: put("mine", noteContent(), group: "g3"), rejected: false, note: "regroup with set-group"),
        Case(
            rules: [view, "annotations:edit:all"], change: put("new", noteContent(), group: "g9"), rejected: true,
            note: "create in another group"),
        Case(
            rules: [view, "annotations:edit:all", "annotations:set-group:all"],
            change: put("new", noteContent(), group: "g9"), rejected: false,
            note: "create in another group with set-group"),
        Case(
            rules: [view, "comments:view:all", "comments:reply:all"],
            change: put("reply", commentContent(root: "thread"), kind: "comment"), rejected: false, note: "reply"),
        Case(
            rules: [view, "comments:view:all", "comments:edit:all"],
            change: put("reply", commentContent(root: "thread"), kind: "comment"), rejected: true,
            note: "reply without reply"),
        Case(
            rules: [view, "comments:view:all", "comments:reply:group=g1"],
            change: put("reply", commentContent(root: "thread"), kind: "comment"), rejected: true,
            note: "reply to another group's thread"),
        Case(
            rules: ["annotations:view:group=g1", "comments:reply:all"],
            change: put("reply", commentContent(root: "thread"), kind: "comment"), rejected: true,
            note: "reply to an invisible thread"),
        Case(
            rules: ["comments:view:all", "comments:edit:all"],
            change: put("c-theirs", commentContent(root: "thread", text: "edited"), kind: "comment"), rejected: false,
            note: "edit a comment"),
        Case(
            rules: ["comments:view:all", "comments:edit:self"],
            change: put("c-theirs", commentContent(root: "thread", text: "edited"), kind: "comment"), rejected: true,
            note: "edit other's comment with self"),
        Case(
            rules: ["comments:view:all", "comments:delete:all"], change: delete("c-theirs", kind: "comment"),
            rejected: false, note: "delete a comment"),
        Case(
            rules: ["comments:view:all"], change: delete("c-theirs", kind: "comment"), rejected: true,
            note: "delete a comment without delete"),
        Case(
            rules: ["form-fields:view:all", "form-fields:fill:all"],
            change: put("formFieldValue:f1", fieldValue("x"), kind: "formFieldValue"), rejected: false, note: "fill"),
        Case(
            rules: ["form-fields:view:all", "form-fields:fill:group=g1"],
            change: put("formFieldValue:f1", fieldValue("x"), kind: "formFieldValue"), rejected: true,
            note: "fill another group's field"),
        Case(
            rules: ["form-fields:fill:all"], change: put("formFieldValue:f1", fieldValue("x"), kind: "formFieldValue"),
            rejected: true, note: "fill without view"),
        Case(
            rules: [], change: put("new", noteContent()), rejected: true, permissions: ["read-document"],
            note: "no write permission"),
    ]

    static func fieldValue(_ value: String) -> JSONValue {
        ["v": 1, "type": "pspdfkit/form-field-value", "name": "f1", "value": .string(value)]
    }

    /// Creates the starting records of a case through tokens without collaboration permissions.
    static func seed(_ client: ServerHarness.Client, _ fixture: SyncFixture, document id: String) async throws {
        let carol = SyncClient(
            client, documentID: id, token: try await fixture.token(id, user: "carol", defaultGroup: "g1"),
            clientID: "seed-carol")
        let dave = SyncClient(
            client, documentID: id, token: try await fixture.token(id, user: "dave", defaultGroup: "g2"),
            clientID: "seed-dave")
        let marker: JSONValue = ["v": 2, "type": "pspdfkit/comment-marker", "pageIndex": 0, "bbox": [1, 1, 9, 9]]
        let seeded = [
            try await carol.sync([put("mine", noteContent())]),
            try await dave.sync([
                put("theirs", noteContent()), put("thread", marker),
                put("c-theirs", commentContent(root: "thread"), kind: "comment"),
                put("formFieldValue:f1", fieldValue("old"), kind: "formFieldValue"),
            ]),
        ]
        for reply in seeded { #expect(reply.rejections.isEmpty, "\(reply.json?["rejected"] ?? .null)") }
    }

    @Test func everyRuleOfTheMatrix() async throws {
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            for testCase in Self.cases {
                let id = try await client.upload(TestPDF.make(pageCount: 1, seed: Int.random(in: 0..<1_000_000)))
                try await Self.seed(client, fixture, document: id)
                let carol = SyncClient(
                    client, documentID: id,
                    token: try await fixture.token(
                        id, user: "carol", permissions: testCase.permissions, defaultGroup: "g1",
                        collaboration: testCase.rules),
                    clientID: "carol")
                let base = try await carol.sync().json?["revision"]?.integerValue ?? 0
                let reply = try await carol.sync([testCase.change], base: base)
                #expect(reply.status == .ok, "\(testCase): \(reply.reason ?? "")")
                let changeID = try #require(testCase.change["id"]?.stringValue)
                if testCase.rejected {
                    #expect(reply.rejections[changeID] == "permissionDenied", "\(testCase)")
                    #expect(reply.json?["revision"]?.integerValue == base, "\(testCase): nothing committed")
                } else {
                    #expect(reply.rejections.isEmpty, "\(testCase): \(reply.json?["rejected"] ?? .null)")
                    #expect(reply.json?["revision"]?.integerValue == base + 1, "\(testCase)")
                }
            }
        }
    }

    /// Later changes of a push are decided on the records as its earlier changes left them: a
    /// reply to a thread the push opens, an edit of a record it creates (which keeps its creator),
    /// a deletion of one it creates, and a reply to a thread it deletes.
    @Test func aPushsChangesSeeItsEarlierChanges() async throws {
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let carol = SyncClient(
                client, documentID: id,
                token: try await fixture.token(
                    id, user: "carol", defaultGroup: "g1",
                    collaboration: [
                        Self.view, "annotations:edit:self", "annotations:delete:self", "comments:view:all",
                        "comments:reply:all",
                    ]),
                clientID: "carol")
            let marker: JSONValue = ["v": 2, "type": "pspdfkit/comment-marker", "pageIndex": 0, "bbox": [1, 1, 9, 9]]
            let reply = try await carol.sync([
                put("thread", marker),
                put("c1", commentContent(root: "thread"), kind: "comment"),
                put("note", noteContent()),
                put("note", noteContent(text: "edited")),
                put("gone", noteContent()),
                delete("gone"),
                put("old-thread", marker),
                delete("old-thread"),
                put("c2", commentContent(root: "old-thread"), kind: "comment"),
            ])
            #expect(reply.status == .ok, "\(reply.reason ?? "")")
            #expect(reply.rejections == ["c2": "permissionDenied"], "\(reply.json?["rejected"] ?? .null)")
            #expect(reply.records["c1"]?["deleted"] == nil && reply.records["c1"]?["createdBy"] == "carol")
            #expect(reply.records["note"]?["content"]?["text"]?["value"] == "edited")
            #expect(reply.records["note"]?["createdBy"] == "carol")
            #expect(reply.records["gone"]?["deleted"] == true)
            #expect(reply.records["old-thread"]?["deleted"] == true)
        }
    }

    @Test func recordsAUserMayNotViewArriveAsTombstones() async throws {
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            try await Self.seed(client, fixture, document: id)
            let carol = SyncClient(
                client, documentID: id,
                token: try await fixture.token(
                    id, user: "carol", defaultGroup: "g1", collaboration: ["annotations:view:group=g1"]),
                clientID: "carol")
            let first = try await carol.sync()
            #expect(first.records["mine"]?["deleted"] == nil)
            #expect(first.records["mine"]?["content"]?["type"]?.stringValue == "pspdfkit/note")
            #expect(first.records["theirs"]?["deleted"] == true)
            #expect(first.records["theirs"]?["content"] == .null, "no data of an invisible record leaks")

            // An admin moves "mine" to g2: Carol loses sight of it and gets a tombstone.
            let admin = SyncClient(
                client, documentID: id, token: try await fixture.token(id, user: "admin"), clientID: "admin")
            let moved = try await admin.sync([put("mine", noteContent(), group: "g2")])
            #expect(moved.rejections.isEmpty)
            let after = try await carol.sync()
            #expect(after.records["mine"]?["deleted"] == true)

            let snapshot = try await client.request(
                .get, "/i/d/\(id)/snapshot", headers: [.authorization: "Token token=\"\(carol.token)\""], apiToken: nil)
            #expect(
                snapshot.json?["records"]?.arrayValue?.isEmpty == true, "the snapshot hides what Carol may not view")
        }
    }

    @Test func aMalformedRuleIsRefusedWithItsPosition() async throws {
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let carol = SyncClient(
                client, documentID: id,
                token: try await fixture.token(id, collaboration: ["annotations:view:all", "annotations:paint:all"]),
                clientID: "carol")
            let reply = try await carol.sync()
            #expect(reply.status == .forbidden)
            #expect(reply.reason?.contains("collaboration_permissions[1]") == true, "\(reply.reason ?? "")")
        }
    }
}
