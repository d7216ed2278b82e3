import Foundation
import GRDB
import InstantJSON

/// A downloaded layer as the store keeps it.
struct LocalLayer: Sendable, Hashable {
    var documentID: String
    var name: String
    var userID: String?
    var defaultGroup: String?
    /// The group of new records that overrides ``defaultGroup`` (`.assigned(nil)`: no group), or
    /// `.unchanged` when there is no override.
    var groupOverride: GroupAssignment
    var revision: Int64
    /// The format version of the stored Instant JSON (``LocalStore/contentVersion`` is current).
    var contentVersion: Int
    /// Whether the records must be fetched again (they predate collaboration permissions).
    var needsRefetch: Bool

    init(row: Row) {
        documentID = row["document_id"]
        name = row["name"]
        userID = row["user_id"]
        defaultGroup = row["default_group"]
        groupOverride = (row["group_override_set"] as Bool? ?? false) ? .assigned(row["group_override"]) : .unchanged
        revision = row["revision"]
        contentVersion = row["content_version"]
        needsRefetch = row["needs_refetch"]
    }
}

extension LocalStore {
    // MARK: PDFs

    /// Where a document's PDF lives.
    func pdfURL(documentID: String) -> URL {
        directory.appendingPathComponent("pdfs").appendingPathComponent(Self.fileName(for: documentID))
    }

    /// A file name for any identifier: ASCII letters and digits kept, everything else written as
    /// `_<code point>_`, so different identifiers never share a file.
    static func fileName(for documentID: String) -> String {
        let safe = documentID.unicodeScalars.map { scalar -> String in
            CharacterSet.alphanumerics.contains(scalar) && scalar.isASCII ? String(scalar) : "_\(scalar.value)_"
        }
        return safe.joined() + ".pdf"
    }

    /// Whether the document's PDF is stored.
    func hasPDF(documentID: String) throws(InstantError) -> Bool {
        try read { db in
            try Bool.fetchOne(db, sql: "SELECT 1 FROM pdfs WHERE document_id = ?", arguments: [documentID]) ?? false
        } && FileManager.default.fileExists(atPath: pdfURL(documentID: documentID).path)
    }

    /// Stores a document's PDF (written to a file first, then recorded).
    func storePDF(_ data: Data, documentID: String) throws(InstantError) {
        let url = pdfURL(documentID: documentID)
        do {
            try data.write(to: url, options: .atomic)
        } catch {
            throw InstantError(.storageFailed, "Cannot write the PDF to \(url.path): \(error)")
        }
        try write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO pdfs (document_id, file_name, byte_size) VALUES (?, ?, ?)",
                arguments: [documentID, url.lastPathComponent, data.count])
        }
    }

    // MARK: Layers

    /// The downloaded layer, or `nil`.
    func layer(documentID: String, name: String) throws(InstantError) -> LocalLayer? {
        try read { db in
            try Row.fetchOne(
                db, sql: "SELECT * FROM layers WHERE document_id = ? AND name = ?", arguments: [documentID, name]
            ).map(LocalLayer.init(row:))
        }
    }

    /// Every downloaded layer.
    func layers() throws(InstantError) -> [LocalLayer] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM layers ORDER BY document_id, name").map(LocalLayer.init(row:))
        }
    }

    /// Stores a downloaded layer with its records, replacing whatever was there, in one transaction.
    func storeDownload(
        documentID: String,
        layer name: String,
        userID: String?,
        defaultGroup: String?,
        revision: Int64,
        records: [SyncRecord]
    ) throws(InstantError) {
        try write { db in
            try db.execute(
                sql: "DELETE FROM layers WHERE document_id = ? AND name = ?", arguments: [documentID, name])
            try db.execute(
                sql: """
                    INSERT INTO layers (document_id, name, user_id, default_group, revision, content_version)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [documentID, name, userID, defaultGroup, revision, Self.contentVersion])
            for record in records where record.content != nil {
                try Self.storeServerVersion(db, record, documentID: documentID, layer: name)
            }
        }
    }

    /// Updates what the layer knows from the latest valid token: its user and default group (the
    /// token itself is kept in memory only).
    func updateClaims(documentID: String, layer name: String, userID: String?, defaultGroup: String?)
        throws(InstantError)
    {
        try write { db in
            try db.execute(
                sql: "UPDATE layers SET user_id = ?, default_group = ? WHERE document_id = ? AND name = ?",
                arguments: [userID, defaultGroup, documentID, name])
        }
    }

    /// Sets (`.assigned`) or clears (`.unchanged`) the group override of new records.
    func setGroupOverride(_ group: GroupAssignment, documentID: String, layer name: String) throws(InstantError) {
        var value: String?
        if case .assigned(let assigned) = group { value = assigned }
        try write { db in
            try db.execute(
                sql: "UPDATE layers SET group_override = ?, group_override_set = ? WHERE document_id = ? AND name = ?",
                arguments: [value, group != .unchanged, documentID, name])
        }
    }

    /// Deletes a layer's records and pending changes; the PDF stays.
    func removeLayer(documentID: String, name: String) throws(InstantError) {
        try write { db in
            try db.execute(sql: "DELETE FROM layers WHERE document_id = ? AND name = ?", arguments: [documentID, name])
        }
    }

    /// Deletes every layer of a document and its PDF.
    func removeDocument(documentID: String) throws(InstantError) {
        try write { db in
            try db.execute(sql: "DELETE FROM layers WHERE document_id = ?", arguments: [documentID])
            try db.execute(sql: "DELETE FROM pdfs WHERE document_id = ?", arguments: [documentID])
            let attachments = try String.fetchAll(
                db, sql: "SELECT id FROM attachments WHERE document_id = ?", arguments: [documentID])
            for id in attachments {
                try? FileManager.default.removeItem(at: attachmentURL(documentID: documentID, id: id))
            }
            try db.execute(sql: "DELETE FROM attachments WHERE document_id = ?", arguments: [documentID])
        }
        try? FileManager.default.removeItem(at: pdfURL(documentID: documentID))
    }

    /// Deletes the PDFs of documents with no downloaded layer, except those in `keeping` (being
    /// downloaded); returns their document ids.
    @discardableResult
    func removeUnreferencedPDFs(keeping: Set<String> = []) throws(InstantError) -> [String] {
        let orphans = try write { db in
            let ids = try String.fetchAll(
                db,
                sql: "SELECT document_id FROM pdfs WHERE document_id NOT IN (SELECT DISTINCT document_id FROM layers)"
            ).filter { !keeping.contains($0) }
            for id in ids { try db.execute(sql: "DELETE FROM pdfs WHERE document_id = ?", arguments: [id]) }
            return ids
        }
        for id in orphans { try? FileManager.default.removeItem(at: pdfURL(documentID: id)) }
        return orphans
    }
}
