import Foundation
import PostgresNIO

extension PostgresTransaction {
    func insertAttachment(documentID: String, _ attachment: StoredAttachment) async throws {
        try await execute(
            """
            INSERT INTO attachments (document_id, sha256, content_type, data)
            VALUES (\(documentID), \(attachment.sha256), \(attachment.contentType), \(attachment.data))
            ON CONFLICT (document_id, sha256) DO NOTHING
            """,
            "storing the attachment \(attachment.sha256) of the document '\(documentID)'"
        )
    }

    func attachment(documentID: String, sha256: String) async throws -> StoredAttachment? {
        try await map(
            "SELECT content_type, data FROM attachments WHERE document_id = \(documentID) AND sha256 = \(sha256)",
            "reading the attachment \(sha256) of the document '\(documentID)'"
        ) { row in
            let (contentType, data) = try row.decode((String, Data).self)
            return StoredAttachment(sha256: sha256, contentType: contentType, data: data)
        }.first
    }

    func attachmentInfo(documentID: String, sha256: String) async throws -> (contentType: String, byteSize: Int)? {
        try await map(
            """
            SELECT content_type, octet_length(data) FROM attachments
            WHERE document_id = \(documentID) AND sha256 = \(sha256)
            """,
            "reading the size of the attachment \(sha256) of the document '\(documentID)'"
        ) { try $0.decode((String, Int).self) }.first.map { ($0.0, $0.1) }
    }

    func attachmentBytes(documentID: String, sha256: String, range: Range<Int>) async throws -> Data? {
        // substring counts from 1; bytea values are at most 1 GiB, within Int32.
        let start = Int32(clamping: max(0, range.lowerBound) + 1)
        let count = Int32(clamping: max(0, range.count))
        return try await map(
            """
            SELECT substring(data FROM \(start) FOR \(count)) FROM attachments
            WHERE document_id = \(documentID) AND sha256 = \(sha256)
            """,
            "reading the attachment \(sha256) of the document '\(documentID)'"
        ) { try $0.decode(Data.self) }.first
    }

    func attachmentKeys(documentID: String, among keys: [String]) async throws -> Set<String> {
        guard !keys.isEmpty else { return [] }
        return Set(
            try await map(
                "SELECT sha256 FROM attachments WHERE document_id = \(documentID) AND sha256 = ANY(\(keys))",
                "looking up attachments of the document '\(documentID)'"
            ) { try $0.decode(String.self) }
        )
    }
}
