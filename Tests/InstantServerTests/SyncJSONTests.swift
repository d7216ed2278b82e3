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
}
