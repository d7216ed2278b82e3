import Foundation
import Hummingbird
import InstantJSON
import InstantTesting
import Testing

@testable import InstantServer

@Suite("Sync protocol", .timeLimit(.minutes(10)))
struct SyncProtocolTests {
    @Test func aPushReachesAnotherClientWithServerAssignedFields() async throws {
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 2))
            let alice = SyncClient(
                client, documentID: id,
                token: try await fixture.token(id, defaultGroup: "team", creatorName: "Alice A."), clientID: "c-alice")
            let bob = SyncClient(
                client, documentID: id, token: try await fixture.token(id, user: "bob"), clientID: "c-bob")

            let pushed = try await alice.sync([put("n1", noteContent(page: 1, text: "hi"))])
            #expect(pushed.status == .ok, "\(pushed.reason ?? "")")
            #expect(pushed.json?["revision"]?.integerValue == 1)
            #expect(pushed.json?["pushId"]?.integerValue == 1)
            #expect(pushed.json?["reset"] == false)
            #expect(pushed.rejections.isEmpty)

            let pulled = try await bob.sync()
            let record = try #require(pulled.records["n1"])
            #expect(record["createdBy"]?.stringValue == "alice")
            #expect(record["group"]?.stringValue == "team")
            #expect(record["content"]?["creatorName"]?.stringValue == "Alice A.")
            #expect(record["content"]?["text"]?["value"]?.stringValue == "hi")
            let updatedAt = try #require(record["content"]?["updatedAt"]?.stringValue)
            #expect(updatedAt != "2026-01-01T00:00:00Z", "the server sets updatedAt")
            #expect(bob.baseRevision == 1)

            // Bob edits; the creator stays Alice, the creator name stays hers.
            let edited = try await bob.sync([put("n1", noteContent(page: 1, text: "hi back"))])
            #expect(edited.records["n1"]?["createdBy"]?.stringValue == "alice")
            #expect(edited.records["n1"]?["updatedBy"]?.stringValue == "bob")
            #expect(edited.records["n1"]?["content"]?["creatorName"]?.stringValue == "Alice A.")
            let caughtUp = try await alice.sync()
            #expect(caughtUp.records["n1"]?["content"]?["text"]?["value"]?.stringValue == "hi back")
            #expect(caughtUp.records.count == 1, "only what changed after the base revision")

            // `"group": null` puts a record in no group, whatever the token's default; an edit
            // without `group` keeps it there.
            let ungrouped = try await alice.sync([put("n2", noteContent(), assigning: .assigned(nil))])
            #expect(ungrouped.records["n2"]?["group"] == .null, "\(ungrouped.json ?? .null)")
            let edited2 = try await alice.sync([put("n2", noteContent(text: "still no group"))])
            #expect(edited2.records["n2"]?["group"] == .null)
            let regrouped = try await alice.sync([put("n2", noteContent(), assigning: .assigned("team"))])
            #expect(regrouped.records["n2"]?["group"] == "team")
        }
    }

    /// A push's answer is read in its commit's transaction when the client is close behind, and in a
    /// read transaction after the commit when it is far behind: both list every change after its base.
    @Test func aPushIsAnsweredWithEveryChangeAfterItsBaseHoweverFarBehind() async throws {
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let alice = SyncClient(client, documentID: id, token: try await fixture.token(id), clientID: "c-alice")
            let behind = InstantAPI.answerInCommitLimit + 6
            for index in 0..<behind { try await alice.sync([put("a\(index)", noteContent())]) }
            #expect(alice.baseRevision == behind)

            // Far behind: at revision 0.
            let bob = SyncClient(
                client, documentID: id, token: try await fixture.token(id, user: "bob"), clientID: "c-bob")
            let far = try await bob.sync([put("b", noteContent())])
            #expect(far.json?["revision"]?.integerValue == behind + 1)
            #expect(far.records.count == Int(behind) + 1)
            #expect(far.records["b"]?["revision"]?.integerValue == behind + 1)

            // Close behind: two revisions back.
            let close = try await alice.sync([put("a-last", noteContent())])
            #expect(close.json?["revision"]?.integerValue == behind + 2)
            #expect(Set(close.records.keys) == ["b", "a-last"])
            #expect(alice.baseRevision == behind + 2)
        }
    }

    /// Pushes sent at once from clients at different revisions (which group commits may answer
    /// from records their group shares): each answer lists exactly the changes after its own base
    /// revision, as a pull shows them, and a user who may view only its own annotations sees the
    /// others as tombstones.
    @Test func pushesCommittedTogetherAreEachAnsweredFromTheirOwnBase() async throws {
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            var writers: [SyncClient] = []
            for index in 0..<8 {
                let token = try await fixture.token(
                    id, user: "u\(index)",
                    collaboration: index == 0 ? ["annotations:view:self", "annotations:edit:self"] : nil)
                writers.append(SyncClient(client, documentID: id, token: token, clientID: "c\(index)"))
            }
            let answers = try await withThrowingTaskGroup(of: (Int, [(base: Int64, answer: JSONValue)]).self) {
                group in
                for (index, writer) in writers.enumerated() {
                    group.addTask {
                        var answers: [(base: Int64, answer: JSONValue)] = []
                        for round in 0..<6 {
                            // Bases spread apart: some writers pull between pushes, some do not.
                            if (index + round) % 3 == 0 { try await writer.sync() }
                            let base = writer.baseRevision
                            let reply = try await writer.sync([put("w\(index)-\(round)", noteContent())])
                            answers.append((base, try #require(reply.json)))
                        }
                        return (index, answers)
                    }
                }
                return try await group.reduce(into: [Int: [(base: Int64, answer: JSONValue)]]()) { $0[$1.0] = $1.1 }
            }
            let everything = try await SyncClient(
                client, documentID: id, token: try await fixture.token(id, user: "reader"), clientID: "reader"
            ).sync().records
            #expect(everything.count == 48)
            for (index, answered) in answers {
                for (base, answer) in answered {
                    let revision = try #require(answer["revision"]?.integerValue)
                    let records = answer["records"]?.arrayValue ?? []
                    let expected = everything.filter { _, record in
                        let changed = record["revision"]?.integerValue ?? 0
                        return changed > base && changed <= revision
                    }
                    #expect(records.compactMap { $0["id"]?.stringValue }.sorted() == expected.keys.sorted())
                    let revisions = records.compactMap { $0["revision"]?.integerValue }
                    #expect(revisions == revisions.sorted(), "the records of an answer go by revision")
                    for record in records {
                        let recordID = try #require(record["id"]?.stringValue)
                        if index == 0, !recordID.hasPrefix("w0-") {
                            #expect(record["deleted"] == true && record["content"] == .null)
                        } else {
                            #expect(record == everything[recordID])
                        }
                    }
                }
            }
        }
    }

    @Test func aRepeatedPushIsAnsweredButNotAppliedAgain() async throws {
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let alice = SyncClient(client, documentID: id, token: try await fixture.token(id), clientID: "c-1")
            let first = try await alice.sync([put("n1", noteContent())], pushID: 5, base: 0)
            #expect(first.json?["revision"]?.integerValue == 1)
            // The answer was lost; the client retries the same push from the same base.
            let retry = try await alice.sync([put("n1", noteContent())], pushID: 5, base: 0)
            #expect(retry.status == .ok)
            #expect(retry.json?["revision"]?.integerValue == 1, "nothing new was committed")
            #expect(retry.json?["pushId"]?.integerValue == 5)
            #expect(retry.records["n1"]?["revision"]?.integerValue == 1)
            // An older push id is answered the same way.
            let older = try await alice.sync([put("n2", noteContent())], pushID: 3, base: 1)
            #expect(older.json?["revision"]?.integerValue == 1)
            #expect(older.records["n2"]?["deleted"] == true, "the push was not applied, so n2 does not exist")
            let layer = try await client.request(.get, "/api/documents/\(id)/annotations")
            #expect(layer.data?["annotations"]?.arrayValue?.count == 1)
        }
    }

    @Test func deleteWinsOverALaterEditAndLastWriterWinsOtherwise() async throws {
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let alice = SyncClient(client, documentID: id, token: try await fixture.token(id), clientID: "a")
            let bob = SyncClient(client, documentID: id, token: try await fixture.token(id, user: "bob"), clientID: "b")
            try await alice.sync([put("n1", noteContent(text: "v1")), put("n2", noteContent(text: "v1"))])
            try await bob.sync()
            #expect(bob.baseRevision == 1)

            // Both edit n1 concurrently: the later arrival wins for everyone.
            try await alice.sync([put("n1", noteContent(text: "alice"))], base: 1)
            let bobsEdit = try await bob.sync([put("n1", noteContent(text: "bob"))], base: 1)
            #expect(bobsEdit.rejections.isEmpty)
            #expect(bobsEdit.records["n1"]?["content"]?["text"]?["value"]?.stringValue == "bob")
            #expect(try await alice.sync().records["n1"]?["content"]?["text"]?["value"]?.stringValue == "bob")

            // Alice deletes n2; Bob, who has not seen that, edits it: the deletion wins.
            try await alice.sync([delete("n2")])
            let late = try await bob.sync([put("n2", noteContent(text: "too late"))], base: 1)
            #expect(late.rejections["n2"] == "recordDeleted")
            #expect(late.records["n2"]?["deleted"] == true)
            let rejected = try #require(late.json?["rejected"]?.arrayValue?.first)
            #expect(rejected["reason"]?.stringValue?.contains("deleted at revision") == true)
        }
    }

    @Test func badRecordsAndMissingAttachmentsAreRejectedOneByOne() async throws {
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let alice = SyncClient(client, documentID: id, token: try await fixture.token(id), clientID: "a")
            let image: JSONValue = [
                "v": 2, "type": "pspdfkit/image", "pageIndex": 0, "bbox": [0, 0, 10, 10],
                "imageAttachmentId": .string(Attachment.key(for: Data("png".utf8))), "contentType": "image/png",
            ]
            var numericID = noteContent().objectValue ?? [:]
            numericID["id"] = 5
            let reply = try await alice.sync([
                put("bad", noteContent(page: 7)),
                put("img", image),
                put("good", noteContent()),
                put("negative", noteContent(page: -1)),
                put("numeric-id", .object(numericID)),
                put("slashed-id", noteContent(id: "a/b")),
            ])
            #expect(
                reply.rejections == [
                    "bad": "invalidRecord", "img": "missingAttachment", "negative": "invalidRecord",
                    "numeric-id": "invalidRecord", "slashed-id": "invalidRecord",
                ])
            #expect(reply.records["good"]?["deleted"] == nil)
            #expect(reply.records["bad"]?["deleted"] == true, "the client learns to drop its rejected creation")
            let reasons = Dictionary(
                uniqueKeysWithValues: (reply.json?["rejected"]?.arrayValue ?? []).compactMap { item in
                    item["id"]?.stringValue.map { ($0, item["reason"]?.stringValue ?? "") }
                })
            // The page is checked against the document's pages in the transaction; the rest of the
            // record before it.
            #expect(reasons["bad"]?.contains("pageIndex: 7 is past the document's last page") == true)
            #expect(reasons["negative"]?.contains("pageIndex: expected an integer ≥ 0") == true)
            #expect(reasons["numeric-id"]?.contains("id: expected a string") == true)
            #expect(reasons["slashed-id"]?.contains("id: not a valid id") == true)

            let upload = try await client.request(
                .put, "/i/d/\(id)/attachments/\(Attachment.key(for: Data("png".utf8)))",
                headers: [.authorization: "Token token=\"\(alice.token)\"", .contentType: "image/png"],
                body: Data("png".utf8), apiToken: nil)
            #expect(upload.status == .ok, "\(upload.reason ?? "")")
            let wrongHash = try await client.request(
                .put, "/i/d/\(id)/attachments/\(Attachment.key(for: Data("other".utf8)))",
                headers: [.authorization: "Token token=\"\(alice.token)\""], body: Data("png".utf8), apiToken: nil)
            #expect(wrongHash.status == .unprocessableContent)
            let retry = try await alice.sync([put("img", image)])
            #expect(retry.rejections.isEmpty)
        }
    }

    @Test func malformedRequestsGetAClearError() async throws {
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let token = try await fixture.token(id)
            let cases: [(JSONValue, String)] = [
                (["baseRevision": 0], "clientId"),
                (["clientId": "c"], "baseRevision"),
                (["clientId": "c", "baseRevision": -1], "baseRevision"),
                (["clientId": "c", "baseRevision": 0, "changes": [put("x", noteContent())]], "pushId"),
                (
                    [
                        "clientId": "c", "baseRevision": 0, "pushId": 1,
                        "changes": [["op": "put", "kind": "annotation"]],
                    ], "changes[0].id"
                ),
                (
                    [
                        "clientId": "c", "baseRevision": 0, "pushId": 1,
                        "changes": [["op": "move", "kind": "annotation", "id": "x"]],
                    ], "changes[0].op"
                ),
                (
                    [
                        "clientId": "c", "baseRevision": 0, "pushId": 1,
                        "changes": [["op": "put", "kind": "layer", "id": "x"]],
                    ], "changes[0].kind"
                ),
                (
                    [
                        "clientId": "c", "baseRevision": 0, "pushId": 1,
                        "changes": [["op": "put", "kind": "annotation", "id": "x", "content": "note"]],
                    ], "changes[0].content"
                ),
                (
                    [
                        "clientId": "c", "baseRevision": 0, "pushId": 1,
                        "changes": [
                            ["op": "put", "kind": "annotation", "id": "x", "content": noteContent(), "group": 7]
                        ],
                    ], "changes[0].group"
                ),
                (["clientId": "c", "baseRevision": 0, "pushId": 1, "changes": ["x"]], "changes[0]"),
            ]
            for (body, field) in cases {
                let reply = try await client.request(
                    .post, "/i/d/\(id)/sync",
                    headers: [.authorization: "Token token=\"\(token)\"", .contentType: "application/json"],
                    body: body.encoded(), apiToken: nil)
                #expect(reply.status == .badRequest)
                #expect(reply.reason?.contains(field) == true, "\(reply.reason ?? "") should name \(field)")
            }
            let unauthenticated = try await client.request(
                .post, "/i/d/\(id)/sync", body: Data("{}".utf8), apiToken: nil)
            #expect(unauthenticated.status == .unauthorized)
        }
    }

    @Test func anUnknownBaseRevisionGetsAFullSnapshot() async throws {
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let alice = SyncClient(client, documentID: id, token: try await fixture.token(id), clientID: "a")
            try await alice.sync([put("n1", noteContent()), put("n2", noteContent())])
            try await alice.sync([delete("n2")])
            let stranger = SyncClient(client, documentID: id, token: try await fixture.token(id), clientID: "s")
            let reply = try await stranger.sync(base: 40)
            #expect(reply.json?["reset"] == true)
            #expect(reply.json?["revision"]?.integerValue == 2)
            #expect(Set(reply.records.keys) == ["n1"], "a snapshot lists live records only")
        }
    }

    @Test func deletingAThreadRootDeletesItsComments() async throws {
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let alice = SyncClient(client, documentID: id, token: try await fixture.token(id), clientID: "a")
            let marker: JSONValue = [
                "v": 2, "type": "pspdfkit/comment-marker", "pageIndex": 0, "bbox": [1, 1, 20, 20],
            ]
            // The root and its first comment in one push, as an offline client would send them.
            let created = try await alice.sync([
                put("root", marker),
                put("c1", commentContent(root: "root"), kind: "comment"),
            ])
            #expect(created.rejections.isEmpty, "\(created.json?["rejected"] ?? .null)")
            try await alice.sync([put("c2", commentContent(root: "root", text: "second"), kind: "comment")])
            let deleted = try await alice.sync([delete("root")])
            #expect(deleted.records["root"]?["deleted"] == true)
            #expect(deleted.records["c1"]?["deleted"] == true)
            #expect(deleted.records["c2"]?["deleted"] == true)
            let comments = try await client.request(
                .get, "/i/d/\(id)/snapshot", headers: [.authorization: "Token token=\"\(alice.token)\""], apiToken: nil)
            #expect(comments.json?["records"]?.arrayValue?.isEmpty == true)
        }
    }

    @Test func namedLayersSyncIndependently() async throws {
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let review = SyncClient(
                client, documentID: id, layer: "review", token: try await fixture.token(id, layer: "review"),
                clientID: "r")
            let main = SyncClient(client, documentID: id, token: try await fixture.token(id), clientID: "m")
            try await review.sync([put("n1", noteContent())])
            #expect(try await main.sync().records.isEmpty)
            let wrongLayer = try await client.request(
                .post, "/i/d/\(id)/sync", headers: [.authorization: "Token token=\"\(review.token)\""],
                body: Data(#"{"clientId":"r","baseRevision":0}"#.utf8), apiToken: nil)
            #expect(wrongLayer.status == .forbidden)
        }
    }
}
