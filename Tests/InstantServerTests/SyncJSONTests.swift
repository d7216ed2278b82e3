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
                    var written = SyncAnswerBody()
                    answer.writeRecords(visibleTo: token, into: &written)
                    var expected = ByteBuffer()
                    StoredRecord.writeSyncJSONArray(
                        Array(records[start...]) + settledRecords, visibleTo: token, into: &expected)
                    #expect(String(buffer: written.joined()) == String(buffer: expected))
                }
            }
        }
        // The hidden record is a tombstone for the user who may view only its own.
        var hidden = SyncAnswerBody()
        InstantAPI.SyncAnswer(
            revision: 4, reset: false, lastPushID: nil, changes: shared.records[2...], shared: shared, settled: []
        ).writeRecords(visibleTo: ownOnly, into: &hidden)
        let visible = try JSONValue.parse(Data(String(buffer: hidden.joined()).utf8)).arrayValue ?? []
        #expect(visible.map { $0["deleted"] == true } == [false, true])
    }

    /// An answer's body takes the JSON it shares with the other answers of its group as it is,
    /// between the text written for it: over HTTP the parts go out one after the other, the shared
    /// bytes from where they were written; in one buffer they are the whole answer.
    @Test func anAnswerBodyTakesSharedJSONWithoutCopyingIt() {
        let shared = ByteBuffer(string: #"{"id":"a"},{"id":"b"},{"id":"c"}"#)
        var body = SyncAnswerBody(ByteBuffer(string: #"{"revision":3,"#))
        body.text.writeString(#""records":["#)
        body.append(shared: shared.getSlice(at: 11, length: 21)!)
        body.text.writeString(",")
        body.append(shared: ByteBuffer(string: #"{"id":"d"}"#))
        body.text.writeString("]}")
        #expect(
            body.buffers.map { String(buffer: $0) } == [
                #"{"revision":3,"records":["#, #"{"id":"b"},{"id":"c"}"#, ",", #"{"id":"d"}"#, "]}",
            ])
        let whole = #"{"revision":3,"records":[{"id":"b"},{"id":"c"},{"id":"d"}]}"#
        #expect(body.readableBytes == whole.utf8.count)
        #expect(String(buffer: body.joined()) == whole)
        // The shared part is a view of the shared buffer (from its 11th byte), not a copy.
        #expect(
            body.buffers[1].withVeryUnsafeBytes { $0.baseAddress }
                == shared.withVeryUnsafeBytes { $0.baseAddress.map { $0 + 11 } })
        // A body of text only is that text, in one part.
        let text = SyncAnswerBody(ByteBuffer(string: "{}"))
        #expect(text.buffers.map { String(buffer: $0) } == ["{}"] && String(buffer: text.joined()) == "{}")
        #expect(SyncAnswerBody().buffers.count == 1 && SyncAnswerBody().readableBytes == 0)
    }

    /// The work of writing an answer is judged by what it writes: the first answer of a group
    /// writes every record the group's answers share (it makes their JSON for all of them), the
    /// next ones take their own from it as it is, which counts for nothing; a user with
    /// collaboration permissions writes only their own. Each record counts its content and a share
    /// of its own, so that tombstones, which have no content, count too.
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
        let tombstone = StoredRecord(
            id: "gone", kind: .annotation, revision: 2, isDeleted: true, content: Data(), updatedAt: Date())
        let last = InstantAPI.SyncAnswer(
            revision: 4, reset: false, lastPushID: nil, changes: shared.records[3...], shared: shared,
            settled: [tombstone])
        // Each record's id ("r4", "gone") and its share besides.
        let record = StoredRecord.syncJSONRecordOverhead
        #expect(
            last.writingWork(for: everyone) == 1_000 + 4 * 2 + 4 + 5 * record,
            "every shared record, before any answer wrote them, and the tombstone")
        #expect(last.writingWork(for: ownOnly) == 400 + 2 + 4 + 2 * record, "its own: it does not use the shared JSON")
        #expect(!shared.hasDerived(SharedSyncJSON.self))
        var written = SyncAnswerBody()
        last.writeRecords(visibleTo: everyone, into: &written)
        #expect(shared.hasDerived(SharedSyncJSON.self))
        #expect(last.writingWork(for: everyone) == 4 + record, "the tombstone only, once the shared JSON is made")
    }

    /// Deriving the JSON of records that carry a run of another group's records, whose JSON is not
    /// made yet, writes the other group's records first, then its own after the run: the work
    /// counts those, and the strings of the records' metadata (a group name can be as long as a push
    /// allows).
    @Test func theWorkOfDerivingCountsWhatACarriedRunNeedsFirst() {
        let group = String(repeating: "g", count: 10_000)
        let records = (1...6).map { revision in
            StoredRecord(
                id: "r\(revision)", kind: .annotation, revision: Int64(revision), group: revision == 1 ? group : nil,
                content: Data(#"{"n":\#(revision)}"#.utf8), updatedAt: Date())
        }
        let first = SharedRecords(Array(records[0..<4]))
        let second = SharedRecords(Array(records[1..<6]), carrying: .init(source: first, offset: 1, count: 3))
        let firstWork = StoredRecord.syncJSONSizeEstimate(of: first.records)
        #expect(firstWork > group.utf8.count + 4 * StoredRecord.syncJSONRecordOverhead)
        #expect(
            second.derivingWork(SharedSyncJSON.self) == StoredRecord.syncJSONSizeEstimate(of: records[4..<6])
                + firstWork)
        _ = first.derived(SharedSyncJSON.self)
        #expect(first.derivingWork(SharedSyncJSON.self) == 0)
        #expect(second.derivingWork(SharedSyncJSON.self) == StoredRecord.syncJSONSizeEstimate(of: records[4..<6]))
        _ = second.derived(SharedSyncJSON.self)
        #expect(second.derivingWork(SharedSyncJSON.self) == 0)
    }

    /// Records that carry a run of another group's records write the JSON of that run as the
    /// other group made it, and their own after it: an answer from any record on is the JSON its
    /// records would have alone, however many groups the runs come from.
    @Test func sharedJSONExtendsTheJSONOfTheRecordsItCarries() throws {
        let records = (1...8).map { revision in
            StoredRecord(
                id: "r\(revision)", kind: .annotation, revision: Int64(revision),
                content: Data(#"{"n":\#(revision)}"#.utf8), updatedAt: Date())
        }
        let everyone = ClientToken(documentID: "d", permissions: ["read-document"], userID: "ann", expiresAt: Date())
        let first = SharedRecords(Array(records[0..<4]))
        _ = first.derived(SharedSyncJSON.self)
        // r2…r4 from the first, then r5 and r6.
        let second = SharedRecords(
            Array(records[1..<6]), carrying: .init(source: first, offset: 1, count: 3))
        #expect(second.recordsToDerive(SharedSyncJSON.self).map(\.id) == ["r5", "r6"])
        _ = second.derived(SharedSyncJSON.self)
        #expect(second.recordsToDerive(SharedSyncJSON.self).isEmpty)
        // r3 (from the first, through the second), r4…r6 from the second, then r7 and r8.
        let third = SharedRecords(Array(records[2..<8]), carrying: .init(source: second, offset: 1, count: 4))
        for shared in [first, second, third] {
            for start in shared.records.indices + [shared.records.endIndex] {
                let answer = InstantAPI.SyncAnswer(
                    revision: 8, reset: false, lastPushID: nil, changes: shared.records[start...], shared: shared,
                    settled: [])
                var written = SyncAnswerBody()
                answer.writeRecords(visibleTo: everyone, into: &written)
                var expected = ByteBuffer()
                StoredRecord.writeSyncJSONArray(shared.records[start...], into: &expected)
                #expect(String(buffer: written.joined()) == String(buffer: expected))
            }
        }
    }

    /// A run that does not match the records it would be taken from is not carried: what is
    /// derived goes through every record.
    @Test func aRunThatDoesNotFitIsNotCarried() {
        let records = (1...3).map { revision in
            StoredRecord(
                id: "r\(revision)", kind: .annotation, revision: Int64(revision), content: Data("{}".utf8),
                updatedAt: Date())
        }
        let source = SharedRecords(records)
        _ = source.derived(SharedSyncJSON.self)
        for run in [(offset: 2, count: 2), (offset: -1, count: 1), (offset: 0, count: 4)] {
            let shared = SharedRecords(records, carrying: .init(source: source, offset: run.offset, count: run.count))
            #expect(shared.recordsToDerive(SharedSyncJSON.self).count == 3)
        }
    }

    /// Records that carry a run of records that themselves carry a run, and so on, keep them all
    /// while none derived anything: the chain is cut after ``SharedRecords/maximumCarriedChain``.
    /// (Records whose run lies within what the records they carry it from carry themselves take it
    /// from those, which keeps no chain.)
    @Test func aChainOfRunsNothingWasDerivedFromIsCut() {
        let length = SharedRecords.maximumCarriedChain + 2
        let records = (1...length + 2).map { revision in
            StoredRecord(
                id: "r\(revision)", kind: .annotation, revision: Int64(revision), content: Data("{}".utf8),
                updatedAt: Date())
        }
        // A window of three records sliding by one: each carries two of the one before.
        var chain = [SharedRecords(Array(records[0..<3]))]
        for start in 1..<length {
            chain.append(
                SharedRecords(
                    Array(records[start..<start + 3]),
                    carrying: .init(source: chain[start - 1], offset: 1, count: 2)))
        }
        // Derived in order, each extends the one before, but the last, which was cut.
        let derivedHere = chain.map { shared in
            defer { _ = shared.derived(SharedSyncJSON.self) }
            return shared.recordsToDerive(SharedSyncJSON.self).count
        }
        #expect(derivedHere == [3] + Array(repeating: 1, count: length - 2) + [3])
    }

    /// A commit's change message copies its records' JSON from what the answers of its group
    /// share, once they made it, across the runs it carries from other groups, and is the message
    /// it would write itself: for everyone, and with tombstones for a user who may view only its
    /// own records. Before the JSON is made, or when the shared records lack one of the commit's
    /// (a later commit of the group wrote it again), the message writes its records itself.
    @Test func aChangeMessageCopiesTheJSONItsGroupShares() throws {
        // Revisions 1 to 6, two or three records each; records by bob at odd positions.
        var records: [StoredRecord] = []
        for revision in 1...6 {
            for index in 0..<(revision % 2 == 0 ? 3 : 2) {
                records.append(
                    StoredRecord(
                        id: "r\(revision)-\(index)", kind: .annotation, revision: Int64(revision),
                        createdBy: records.count % 2 == 1 ? "bob" : "ann",
                        content: Data(#"{"n":"\#(revision)-\#(index)"}"#.utf8), updatedAt: Date()))
            }
        }
        let everyone = ClientToken(documentID: "d", permissions: ["read-document"], userID: "ann", expiresAt: Date())
        var ownOnly = everyone
        ownOnly.collaborationPermissions = try CollaborationPermissions(claim: ["annotations:view:self"])
        // Revision 1 and two records of 2 in a first group; those two carried into the second (from
        // the first), which adds the third of revision 2, and 3 to 6.
        let first = SharedRecords(Array(records[0..<4]))
        _ = first.derived(SharedSyncJSON.self)
        let second = SharedRecords(Array(records[2...]), carrying: .init(source: first, offset: 2, count: 2))
        func changes(_ revision: Int64, _ shared: SharedRecords?, lacking: String? = nil) -> LayerChangeSet {
            var changes = LayerChangeSet(
                documentID: "d", layer: "", since: revision - 1, revision: revision,
                records: records.filter { $0.revision == revision && $0.id != lacking })
            changes.sharedRecords = shared
            return changes
        }
        func texts(_ message: ChangeMessage) -> [String?] {
            [everyone, ownOnly].map { message.text(for: $0).map { String(buffer: $0) } }
        }
        let unshared = (2...6).map { texts(ChangeMessage(changes($0, nil), maximumSize: 1 << 16)) }
        #expect(unshared[2][1] != unshared[2][0], "bob's record of revision 4 is a tombstone for ann")
        let beforeTheJSON = (2...6).map { texts(ChangeMessage(changes($0, second), maximumSize: 1 << 16)) }
        #expect(!second.hasDerived(SharedSyncJSON.self), "a change message does not make the shared JSON")
        _ = second.derived(SharedSyncJSON.self)
        let copied = (2...6).map { texts(ChangeMessage(changes($0, second), maximumSize: 1 << 16)) }
        #expect(ChangeMessage.sharedJSON(of: changes(4, second))?.range == 5..<8, "r4-0 after r2-0 to r3-1")
        #expect(ChangeMessage.sharedJSON(of: changes(2, second))?.range == 0..<3, "over both runs")
        #expect(beforeTheJSON == unshared)
        #expect(copied == unshared)
        // A commit of revision 4 with one record fewer than the shared records have of it, and one
        // with a record they lack.
        let fewer = changes(4, second, lacking: "r4-2")
        #expect(
            texts(ChangeMessage(fewer, maximumSize: 1 << 16))
                == texts(ChangeMessage(changes(4, nil, lacking: "r4-2"), maximumSize: 1 << 16)))
        var more = changes(4, second)
        more.records.append(
            StoredRecord(id: "r4-9", kind: .annotation, revision: 4, content: Data("{}".utf8), updatedAt: Date()))
        #expect(ChangeMessage.sharedJSON(of: fewer) == nil && ChangeMessage.sharedJSON(of: more) == nil)
        var moreUnshared = more
        moreUnshared.sharedRecords = nil
        #expect(
            texts(ChangeMessage(more, maximumSize: 1 << 16)) == texts(ChangeMessage(moreUnshared, maximumSize: 1 << 16))
        )
        // Over the size limit, only the revisions go out, whichever way the JSON came; a message
        // of the limit's size goes out.
        let size = try #require(ChangeMessage(changes(4, nil), maximumSize: 1 << 16).text?.readableBytes)
        for shared in [nil, second] {
            #expect(texts(ChangeMessage(changes(4, shared), maximumSize: size)) == unshared[2])
            #expect(texts(ChangeMessage(changes(4, shared), maximumSize: size - 1)) == [nil, nil])
        }
    }

    /// Before its answers are delivered, a group derives what they share, unless its records
    /// carry a run of another group's that has nothing derived yet: that would derive the other
    /// group's value first, from all of its records.
    @Test func aGroupDerivesBeforeDeliveryUnlessWhatItCarriesHasNothingYet() async {
        let records = (1...6).map { revision in
            StoredRecord(
                id: "r\(revision)", kind: .annotation, revision: Int64(revision),
                content: Data(#"{"n":\#(revision)}"#.utf8), updatedAt: Date())
        }
        let first = SharedRecords(Array(records[0..<4]))
        let second = SharedRecords(Array(records[1..<6]), carrying: .init(source: first, offset: 1, count: 3))
        await second.deriveBeforeDelivery([SharedSyncJSON.self])
        #expect(!second.hasDerived(SharedSyncJSON.self) && !first.hasDerived(SharedSyncJSON.self))
        await first.deriveBeforeDelivery([SharedSyncJSON.self])
        await second.deriveBeforeDelivery([SharedSyncJSON.self])
        #expect(first.hasDerived(SharedSyncJSON.self) && second.hasDerived(SharedSyncJSON.self))
        #expect(second.recordsToDerive(SharedSyncJSON.self).isEmpty)
    }
}
