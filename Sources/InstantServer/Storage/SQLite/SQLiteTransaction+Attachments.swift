import Foundation
import GRDB

extension SQLiteTransaction {
    func insertAttachment(documentID: String, _ attachment: StoredAttachment) async throws {
        try await run { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO attachments (document_id, sha256, content_type, data) VALUES (?, ?, ?, ?)",
                arguments: [documentID, attachment.sha256, attachment.contentType, attachment.data]
            )
        }
    }

    func attachment(documentID: String, sha256: String) async throws -> StoredAttachment? {
        try await run { db in
            try Row.fetchOne(
                db,
                sql: "SELECT sha256, content_type, data FROM attachments WHERE document_id = ? AND sha256 = ?",
                arguments: [documentID, sha256]
            ).map { StoredAttachment(sha256: $0[0], contentType: $0[1], data: $0[2]) }
        }
    }

    func attachmentInfo(documentID: String, sha256: String) async throws -> (contentType: String, byteSize: Int)? {
        try await run { db in
            try Row.fetchOne(
                db,
                sql: "SELECT content_type, length(data) FROM attachments WHERE document_id = ? AND sha256 = ?",
                arguments: [documentID, sha256]
            ).map { ($0[0], $0[1]) }
        }
    }

    func attachmentBytes(documentID: String, sha256: String, range: Range<Int>) async throws -> Data? {
        // substr counts from 1 and reads only the part asked for of a BLOB.
        try await run { db in
            try Row.fetchOne(
                db,
                sql: "SELECT substr(data, ?, ?) FROM attachments WHERE document_id = ? AND sha256 = ?",
                arguments: [max(0, range.lowerBound) + 1, max(0, range.count), documentID, sha256]
            ).map { $0[0] ?? Data() }
        }
    }

    func attachmentKeys(documentID: String, among keys: [String]) async throws -> Set<String> {
        try await run { db in
            var found: Set<String> = []
            for key in Set(keys) {
                let exists = try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM attachments WHERE document_id = ? AND sha256 = ?"),
                    arguments: [documentID, key])
                if exists == true { found.insert(key) }
            }
            return found
        }
    }

    func revokeTokens(ids: [String], at time: Date) async throws {
        try await run { db in
            for id in ids {
                try db.execute(
                    sql: "INSERT OR IGNORE INTO revoked_tokens (jti, revoked_at) VALUES (?, ?)",
                    arguments: [id, time.timeIntervalSince1970]
                )
            }
        }
    }

    func isTokenRevoked(id: String) async throws -> Bool {
        try await run { db in
            try Bool.fetchOne(db, sql: "SELECT 1 FROM revoked_tokens WHERE jti = ?", arguments: [id]) ?? false
        }
    }
}
