import Hummingbird
import InstantJSON

extension StoredRecord {
    /// Writes records as a JSON array of ``writeSyncJSON(into:)``: the `records` of sync answers and
    /// snapshots.
    static func writeSyncJSONArray(_ records: some Sequence<StoredRecord>, into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(ascii: "["))
        for (index, record) in records.enumerated() {
            if index > 0 { buffer.writeInteger(UInt8(ascii: ",")) }
            record.writeSyncJSON(into: &buffer)
        }
        buffer.writeInteger(UInt8(ascii: "]"))
    }

    /// Writes the record as the client routes send it (docs/PROTOCOL.md, "Records on the wire"):
    /// metadata plus the stored Instant JSON content, copied as stored (the server wrote it, so it
    /// is valid JSON), or `null` with `"deleted": true` for a tombstone.
    func writeSyncJSON(into buffer: inout ByteBuffer) {
        buffer.writeString(#"{"content":"#)
        if isDeleted || content.isEmpty {
            buffer.writeString("null")
        } else {
            buffer.writeBytes(content)
        }
        // The metadata, written directly in key order (answers carry thousands of records), each
        // key with its punctuation as one literal.
        var output: [UInt8] = []
        output.reserveCapacity(160)
        func member(_ key: StaticString, _ value: String?) {
            output.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
            if let value { JSONValue.writeString(value, into: &output) } else { output.append(contentsOf: "null".utf8) }
        }
        member(#","createdBy":"#, createdBy)
        if isDeleted { output.append(contentsOf: #","deleted":true"#.utf8) }
        member(#","group":"#, group)
        member(#","id":"#, id)
        member(#","kind":"#, kind.rawValue)
        if let pdfObjectID {
            output.append(contentsOf: #","pdfObjectId":"#.utf8)
            output.append(contentsOf: String(pdfObjectID).utf8)
        }
        output.append(contentsOf: #","revision":"#.utf8)
        output.append(contentsOf: String(revision).utf8)
        member(#","updatedBy":"#, updatedBy)
        output.append(UInt8(ascii: "}"))
        buffer.writeBytes(output)
    }
}
