import Foundation
import GRDB
import InstantJSON

extension SQLiteStorage {
    public func putAttachment(documentID: String, data: Data, contentType: String) async throws -> String {
        let sha = Attachment.key(for: data)
        try await write { db in
            try Self.requireDocument(db, documentID)
            try Self.insertAttachment(
                db,
                documentID: documentID,
                StoredAttachment(sha256: sha, contentType: contentType, data: data)
            )
        }
        return sha
    }

    static func insertAttachment(_ db: Database, documentID: String, _ attachment: StoredAttachment) throws {
        try db.execute(
            sql: "INSERT OR IGNORE INTO attachments (document_id, sha256, content_type, data) VALUES (?, ?, ?, ?)",
            arguments: [documentID, attachment.sha256, attachment.contentType, attachment.data]
        )
    }

    public func attachment(documentID: String, sha256: String) async throws -> StoredAttachment? {
        try await read { db in
            try Row.fetchOne(
                db,
                sql: "SELECT sha256, content_type, data FROM attachments WHERE document_id = ? AND sha256 = ?",
                arguments: [documentID, sha256]
            ).map { StoredAttachment(sha256: $0["sha256"], contentType: $0["content_type"], data: $0["data"]) }
        }
    }

    public func revokeTokens(ids: [String]) async throws {
        let now = Date().timeIntervalSince1970
        try await write { db in
            for id in ids {
                try db.execute(
                    sql: "INSERT OR IGNORE INTO revoked_tokens (jti, revoked_at) VALUES (?, ?)",
                    arguments: [id, now]
                )
            }
        }
    }

    public func isTokenRevoked(id: String) async throws -> Bool {
        try await read { db in
            try Bool.fetchOne(db, sql: "SELECT 1 FROM revoked_tokens WHERE jti = ?", arguments: [id]) ?? false
        }
    }
}
