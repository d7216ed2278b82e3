import Hummingbird
import InstantJSON

extension StoredRecord {
    /// Writes the record as the client routes send it (docs/PROTOCOL.md, "Records on the wire"):
    /// metadata plus the stored Instant JSON content, copied as stored (the server wrote it, so it
    /// is valid JSON), or `null` with `"deleted": true` for a tombstone.
    func writeSyncJSON(into buffer: inout ByteBuffer) {
        var metadata: [String: JSONValue] = [
            "id": .string(id),
            "kind": .string(kind.rawValue),
            "revision": .integer(revision),
            "group": .optional(group),
            "createdBy": .optional(createdBy),
            "updatedBy": .optional(updatedBy),
        ]
        if isDeleted { metadata["deleted"] = true }
        if let pdfObjectID { metadata["pdfObjectId"] = .integer(Int64(pdfObjectID)) }
        buffer.writeString(#"{"content":"#)
        if isDeleted || content.isEmpty {
            buffer.writeString("null")
        } else {
            buffer.writeBytes(content)
        }
        buffer.writeInteger(UInt8(ascii: ","))
        // The metadata object without its opening brace.
        buffer.writeBytes(JSONValue.object(metadata).serialized().dropFirst())
    }
}
