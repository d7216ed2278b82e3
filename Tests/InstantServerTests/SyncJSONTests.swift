import Foundation
import InstantJSON
import NIOCore
import Testing

@testable import InstantServer

/// Records as the client routes write them by hand: valid JSON with exactly the members of
/// docs/PROTOCOL.md ("Records on the wire"), keys in order, strings escaped.
@Suite("Records on the wire", .timeLimit(.minutes(10)))
struct SyncJSONTests {
    static func written(_ record: StoredRecord) throws -> (text: String, value: JSONValue) {
        var buffer = ByteBuffer()
        var scratch: [UInt8] = []
        record.writeSyncJSON(into: &buffer, using: &scratch)
        let text = String(buffer: buffer)
        return (text, try JSONValue.parse(Data(text.utf8)))
    }

    @Test func aRecordCarriesItsContentAndMetadata() throws {
        let content = #"{"bbox":[1,2,3,4],"type":"pspdfkit/note","v":2}"#
        let record = StoredRecord(
            id: "note \"1\"\n", kind: .annotation, revision: 7, group: "re\\views", createdBy: "ann",
            updatedBy: nil, pdfObjectID: 12, content: Data(content.utf8), updatedAt: Date())
        let (text, value) = try Self.written(record)
        #expect(
            value
                == .object([
                    "content": try JSONValue.parse(Data(content.utf8)), "createdBy": "ann", "group": "re\\views",
                    "id": "note \"1\"\n", "kind": "annotation", "pdfObjectId": 12, "revision": 7, "updatedBy": .null,
                ]))
        #expect(text.hasPrefix(#"{"content":{"bbox""#))
        #expect(text == String(decoding: value.serialized(), as: UTF8.self))
    }

    @Test func aTombstoneHasNullContentAndIsMarkedDeleted() throws {
        let record = StoredRecord(
            id: "gone", kind: .comment, revision: 3, isDeleted: true, content: Data(), updatedAt: Date())
        let (text, value) = try Self.written(record)
        #expect(
            value
                == .object([
                    "content": .null, "createdBy": .null, "deleted": true, "group": .null, "id": "gone",
                    "kind": "comment", "revision": 3, "updatedBy": .null,
                ]))
        #expect(text == String(decoding: value.serialized(), as: UTF8.self))
    }

    /// An answer's records in one array, each as it is written alone, whatever the record before it
    /// left in the scratch bytes they share.
    @Test func recordsGoOutAsOneArray() throws {
        let records = [
            StoredRecord(
                id: "a", kind: .annotation, revision: 1, createdBy: "ann",
                content: Data(String(repeating: #"{"long":"\#(String(repeating: "x", count: 500))"}"#, count: 1).utf8),
                updatedAt: Date()),
            StoredRecord(id: "b", kind: .comment, revision: 2, isDeleted: true, content: Data(), updatedAt: Date()),
            StoredRecord(
                id: "c\"", kind: .bookmark, revision: 3, content: Data(#"{"name":"n"}"#.utf8), updatedAt: Date()),
        ]
        var buffer = ByteBuffer()
        StoredRecord.writeSyncJSONArray(records, into: &buffer)
        let written = try records.map { try Self.written($0).value }
        #expect(try JSONValue.parse(Data(String(buffer: buffer).utf8)) == .array(written))
        var empty = ByteBuffer()
        StoredRecord.writeSyncJSONArray([StoredRecord](), into: &empty)
        #expect(String(buffer: empty) == "[]")
    }

    /// An answer that takes its changes from the records its group shares writes them as an answer
    /// of its own would: from its base revision on, with its settled records after, and hidden
    /// records as tombstones for a user with collaboration permissions.
    @Test func anAnswerWritesSharedChangesAsItsOwn() throws {
        let records = (1...4).map { revision in
            StoredRecord(
                id: "r\(revision)", kind: .annotation, revision: Int64(revision),
                createdBy: revision == 3 ? "ann" : "bob",
                content: Data(#"{"n":\#(revision)}"#.utf8), updatedAt: Date())
        }
        let shared = SharedRecords(records)
        let settled = StoredRecord(
            id: "rejected", kind: .annotation, revision: 0, isDeleted: true, content: Data(), updatedAt: Date())
        let everyone = ClientToken(documentID: "d", permissions: ["read-document"], userID: "ann", expiresAt: Date())
        var ownOnly = everyone
        ownOnly.collaborationPermissions = try CollaborationPermissions(claim: ["annotations:view:self"])
        for start in 0...records.count {
            for settledRecords in [[], [settled]] {
                for token in [everyone, ownOnly] {
                    let answer = InstantAPI.SyncAnswer(
                        revision: 4, reset: false, lastPushID: nil, changes: shared.records[start...], shared: shared,
                        settled: settledRecords)
                    var written = ByteBuffer()
                    answer.writeRecords(visibleTo: token, into: &written)
                    var expected = ByteBuffer()
                    StoredRecord.writeSyncJSONArray(
                        Array(records[start...]) + settledRecords, visibleTo: token, into: &expected)
                    #expect(String(buffer: written) == String(buffer: expected))
                }
            }
        }
        // The hidden record is a tombstone for the user who may view only its own.
        var hidden = ByteBuffer()
        InstantAPI.SyncAnswer(
            revision: 4, reset: false, lastPushID: nil, changes: shared.records[2...], shared: shared, settled: []
        ).writeRecords(visibleTo: ownOnly, into: &hidden)
        let visible = try JSONValue.parse(Data(String(buffer: hidden).utf8)).arrayValue ?? []
        #expect(visible.map { $0["deleted"] == true } == [false, true])
    }

    /// The work of writing an answer is judged by what it reads: the first answer of a group reads
    /// every record the group's answers share (it makes their JSON for all of them), the next ones
    /// only their own; a user with collaboration permissions reads only their own.
    @Test func anAnswerCountsTheSharedRecordsOnlyWhileNoAnswerWroteThem() throws {
        let records = (1...4).map { revision in
            StoredRecord(
                id: "r\(revision)", kind: .annotation, revision: Int64(revision),
                content: Data(String(repeating: "x", count: 100 * revision).utf8), updatedAt: Date())
        }
        let shared = SharedRecords(records)
        let everyone = ClientToken(documentID: "d", permissions: ["read-document"], userID: "ann", expiresAt: Date())
        var ownOnly = everyone
        ownOnly.collaborationPermissions = try CollaborationPermissions(claim: ["annotations:view:self"])
        let last = InstantAPI.SyncAnswer(
            revision: 4, reset: false, lastPushID: nil, changes: shared.records[3...], shared: shared, settled: [])
        #expect(last.contentBytes(writtenFor: everyone) == 1_000, "every shared record, before any answer wrote them")
        #expect(last.contentBytes(writtenFor: ownOnly) == 400, "its own: it does not use the shared JSON")
        #expect(!shared.hasDerived(SharedSyncJSON.self))
        var written = ByteBuffer()
        last.writeRecords(visibleTo: everyone, into: &written)
        #expect(shared.hasDerived(SharedSyncJSON.self))
        #expect(last.contentBytes(writtenFor: everyone) == 400, "its own, once the shared JSON is made")
    }
}
