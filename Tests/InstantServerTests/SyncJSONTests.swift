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
        record.writeSyncJSON(into: &buffer)
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
}
