import Foundation
import GRDB

extension SQLiteTransaction {
    func document(id: String) async throws -> StoredDocument? {
        try await run { db in
            try Row.fetchOne(db, sql: "SELECT * FROM documents WHERE id = ?", arguments: [id]).map(Self.document(from:))
        }
    }

    func documents(_ query: DocumentQuery) async throws -> DocumentListing {
        try await run { db in
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

    func insertDocument(_ document: StoredDocument) async throws -> Bool {
        let pagesJSON = String(decoding: try JSONEncoder().encode(document.pages), as: UTF8.self)
        let pdfIDJSON = try document.pdfID.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        return try await run { db in
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO documents (id, title, sha256, byte_size, pages, page_count, pdf_id,
                        password_protected, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    document.id, document.title, document.sourcePDFSHA256, document.byteSize, pagesJSON,
                    document.pages.count, pdfIDJSON, document.isPasswordProtected,
                    document.createdAt.timeIntervalSince1970,
                ]
            )
            return db.changesCount > 0
        }
    }

    func deleteDocument(id: String) async throws -> Bool {
        try await run { db in
            // Records and push state hang off layers, which cascade from the document; deleting
            // them first spares SQLite a cascade row by row.
            for table in ["records", "client_pushes"] {
                try db.execute(
                    sql: "DELETE FROM \(table) WHERE layer_id IN (SELECT id FROM layers WHERE document_id = ?)",
                    arguments: [id])
            }
            try db.execute(sql: "DELETE FROM documents WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    func isPDFReferenced(sha256: String) async throws -> Bool {
        try await run { db in
            try Bool.fetchOne(db, sql: "SELECT 1 FROM documents WHERE sha256 = ?", arguments: [sha256]) ?? false
        }
    }

    func insertBaseRecords(documentID: String, _ records: [RecordWrite]) async throws {
        try await run { db in
            let statement = try db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO base_records (document_id, id, kind, group_name, pdf_object_id, content)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """)
            for record in records {
                try statement.execute(arguments: [
                    documentID, record.id, record.kind.rawValue, record.group, record.pdfObjectID, record.content,
                ])
            }
        }
    }

    func baseRecords(documentID: String) async throws -> [StoredRecord] {
        try await run { db in
            try Row.fetchAll(
                db,
                sql:
                    "SELECT id, kind, group_name, pdf_object_id, content FROM base_records WHERE document_id = ? ORDER BY id",
                arguments: [documentID]
            ).map { row in
                StoredRecord(
                    id: row[0], kind: RecordKind(rawValue: row[1]), revision: 0, group: row[2], pdfObjectID: row[3],
                    content: row[4], updatedAt: Date(timeIntervalSince1970: 0))
            }
        }
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
