import Foundation
import GRDB
import InstantJSON

/// An attachment in the local store.
struct LocalAttachment: Sendable, Hashable {
    /// The SHA-256 of the bytes, lowercase hex.
    var id: String
    var contentType: String
    var data: Data
}

extension LocalStore {
    /// Where an attachment's bytes live.
    func attachmentURL(documentID: String, id: String) -> URL {
        directory.appendingPathComponent("attachments").appendingPathComponent(
            Self.fileName(for: documentID).dropLast(4) + "-" + id)
    }

    /// Stores an attachment (the bytes as a file, then the row); the same bytes twice are one.
    /// - Parameter uploaded: Whether the server has it already (it came from there).
    @discardableResult
    func putAttachment(_ data: Data, contentType: String, documentID: String, uploaded: Bool) throws(InstantError)
        -> String
    {
        let id = Attachment.key(for: data)
        let url = attachmentURL(documentID: documentID, id: id)
        do {
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            if !FileManager.default.fileExists(atPath: url.path) { try data.write(to: url, options: .atomic) }
        } catch {
            throw InstantError(.storageFailed, "Cannot write the attachment to \(url.path): \(error)")
        }
        try write { db in
            try db.execute(
                sql: """
                    INSERT INTO attachments (document_id, id, content_type, uploaded) VALUES (?, ?, ?, ?)
                    ON CONFLICT (document_id, id) DO UPDATE SET uploaded = MAX(uploaded, excluded.uploaded)
                    """,
                arguments: [documentID, id, contentType, uploaded])
        }
        return id
    }

    /// An attachment of the document, or `nil` if this device does not have it.
    func attachment(documentID: String, id: String) throws(InstantError) -> LocalAttachment? {
        let contentType = try read { db in
            try String.fetchOne(
                db, sql: "SELECT content_type FROM attachments WHERE document_id = ? AND id = ?",
                arguments: [documentID, id])
        }
        guard let contentType,
            let data = try? Data(contentsOf: attachmentURL(documentID: documentID, id: id))
        else { return nil }
        return LocalAttachment(id: id, contentType: contentType, data: data)
    }

    /// The attachments made on this device that the server does not have yet.
    func attachmentsToUpload(documentID: String) throws(InstantError) -> [LocalAttachment] {
        let ids = try read { db in
            try String.fetchAll(
                db, sql: "SELECT id FROM attachments WHERE document_id = ? AND uploaded = 0", arguments: [documentID])
        }
        var attachments: [LocalAttachment] = []
        for id in ids {
            if let attachment = try attachment(documentID: documentID, id: id) { attachments.append(attachment) }
        }
        return attachments
    }

    /// Notes that the server has an attachment.
    func markUploaded(documentID: String, id: String) throws(InstantError) {
        try write { db in
            try db.execute(
                sql: "UPDATE attachments SET uploaded = 1 WHERE document_id = ? AND id = ?",
                arguments: [documentID, id])
        }
    }
}
