import Foundation
import GRDB

extension SQLiteStorage {
    public func createDocument(
        _ document: StoredDocument,
        pdf: Data,
        baseRecords: [RecordWrite],
        initialChanges: [RecordChange],
        attachments: [StoredAttachment]
    ) async throws {
        let fileURL = pdfURL(sha256: document.sourcePDFSHA256)
        let pagesJSON = String(decoding: try JSONEncoder().encode(document.pages), as: UTF8.self)
        let pdfIDJSON = try document.pdfID.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        try await write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM documents WHERE id = ?", arguments: [document.id]) != nil {
                throw StorageError(
                    .documentExists,
                    "A document with the id '\(document.id)' already exists. Delete it first or choose another id."
                )
            }
            let wroteFile = try Self.writeFileIfMissing(pdf, to: fileURL)
            do {
                try db.execute(
                    sql: """
                        INSERT INTO documents (id, title, sha256, byte_size, pages, pdf_id, password_protected, created_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        document.id, document.title, document.sourcePDFSHA256, document.byteSize, pagesJSON,
                        pdfIDJSON, document.isPasswordProtected, document.createdAt.timeIntervalSince1970,
                    ]
                )
                for record in baseRecords {
                    try db.execute(
                        sql: """
                            INSERT OR REPLACE INTO base_records (document_id, id, kind, group_name, pdf_object_id, content)
                            VALUES (?, ?, ?, ?, ?, ?)
                            """,
                        arguments: [
                            document.id, record.id, record.kind.rawValue, record.group, record.pdfObjectID,
                            record.content,
                        ]
                    )
                }
                try Self.insertLayer(db, documentID: document.id, name: "", source: .baseRecords, now: Date())
                for attachment in attachments {
                    try Self.insertAttachment(db, documentID: document.id, attachment)
                }
                if !initialChanges.isEmpty {
                    _ = try Self.applyChanges(
                        db,
                        initialChanges,
                        documentID: document.id,
                        layer: "",
                        push: nil,
                        onConditionFailure: .abortBatch
                    )
                }
            } catch {
                // The transaction rolls back; a PDF file written for it alone goes too.
                if wroteFile { try? FileManager.default.removeItem(at: fileURL) }
                throw error
            }
        }
    }

    public func document(id: String) async throws -> StoredDocument? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM documents WHERE id = ?", arguments: [id]).map(Self.document(from:))
        }
    }

    public func listDocuments(_ query: DocumentQuery) async throws -> DocumentListing {
        try await read { db in
            var filter = ""
            var arguments: StatementArguments = []
            if let title = query.titleFilter, !title.isEmpty {
                filter = "WHERE title LIKE ? ESCAPE '\\'"
                let escaped =
                    title
                    .replacingOccurrences(of: "\\", with: "\\\\")
                    .replacingOccurrences(of: "%", with: "\\%")
                    .replacingOccurrences(of: "_", with: "\\_")
                arguments += ["%\(escaped)%"]
            }
            let total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM documents \(filter)", arguments: arguments) ?? 0
            let direction = query.ascending ? "ASC" : "DESC"
            let column = query.order == .title ? "title" : "created_at"
            arguments += [max(0, query.limit), max(0, query.offset)]
            let rows = try Row.fetchAll(
                db,
                sql:
                    "SELECT * FROM documents \(filter) ORDER BY \(column) \(direction), id \(direction) LIMIT ? OFFSET ?",
                arguments: arguments
            )
            return DocumentListing(documents: try rows.map(Self.document(from:)), totalCount: total)
        }
    }

    public func deleteDocument(id: String) async throws -> Bool {
        let directory = pdfDirectory
        return try await write { db in
            guard let sha = try String.fetchOne(db, sql: "SELECT sha256 FROM documents WHERE id = ?", arguments: [id])
            else { return false }
            try db.execute(sql: "DELETE FROM records WHERE document_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM client_pushes WHERE document_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM documents WHERE id = ?", arguments: [id])
            let stillUsed =
                try Bool.fetchOne(db, sql: "SELECT 1 FROM documents WHERE sha256 = ?", arguments: [sha]) ?? false
            if !stillUsed {
                try? FileManager.default.removeItem(at: directory.appendingPathComponent("\(sha).pdf"))
            }
            return true
        }
    }

    public func pdf(sha256: String) async throws -> Data? {
        guard Self.isSHA256Hex(sha256) else { return nil }
        let url = pdfURL(sha256: sha256)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        do {
            return try Data(contentsOf: url, options: .mappedIfSafe)
        } catch {
            throw StorageError(.backendFailure, "Cannot read the PDF file \(url.path): \(error)")
        }
    }

    public func baseRecords(documentID: String) async throws -> [StoredRecord] {
        try await read { db in
            let rows = try Row.fetchAll(
                db,
                sql: "SELECT * FROM base_records WHERE document_id = ? ORDER BY id",
                arguments: [documentID]
            )
            return rows.map { row in
                StoredRecord(
                    id: row["id"],
                    kind: RecordKind(rawValue: row["kind"]),
                    revision: 0,
                    group: row["group_name"],
                    pdfObjectID: row["pdf_object_id"],
                    content: row["content"],
                    updatedAt: Date(timeIntervalSince1970: 0)
                )
            }
        }
    }

    func pdfURL(sha256: String) -> URL {
        pdfDirectory.appendingPathComponent("\(sha256).pdf")
    }

    /// Writes a content-addressed file atomically (temporary file, fsync, rename) unless it exists.
    /// Returns whether it wrote the file.
    @discardableResult
    static func writeFileIfMissing(_ data: Data, to url: URL) throws -> Bool {
        if FileManager.default.fileExists(atPath: url.path) { return false }
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(UUID().uuidString).tmp")
        do {
            try data.write(to: temporary)
            let handle = try FileHandle(forWritingTo: temporary)
            try handle.synchronize()
            try handle.close()
            if rename(temporary.path, url.path) != 0 {
                throw StorageError(.backendFailure, "Cannot move the PDF into place at \(url.path) (errno \(errno)).")
            }
            return true
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            if let error = error as? StorageError { throw error }
            throw StorageError(.backendFailure, "Cannot write the PDF file \(url.path): \(error)")
        }
    }

    static func isSHA256Hex(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    static func document(from row: Row) throws -> StoredDocument {
        let pagesText: String = row["pages"]
        let pdfIDText: String? = row["pdf_id"]
        do {
            return StoredDocument(
                id: row["id"],
                title: row["title"],
                sourcePDFSHA256: row["sha256"],
                byteSize: row["byte_size"],
                pages: try JSONDecoder().decode([PageInfo].self, from: Data(pagesText.utf8)),
                pdfID: try pdfIDText.map { try JSONDecoder().decode(DocumentPDFID.self, from: Data($0.utf8)) },
                isPasswordProtected: row["password_protected"],
                createdAt: Date(timeIntervalSince1970: row["created_at"])
            )
        } catch {
            throw StorageError(.corrupted, "The stored document '\(row["id"] as String)' cannot be read: \(error)")
        }
    }
}
