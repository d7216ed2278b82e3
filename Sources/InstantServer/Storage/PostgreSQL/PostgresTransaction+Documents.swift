import Foundation
import PostgresNIO

extension PostgresTransaction {
    /// The columns ``document(from:)`` reads, in its order.
    static let documentColumns =
        "id, title, sha256, byte_size, pages::text, pdf_id::text, password_protected, created_at"

    func document(id: String) async throws -> StoredDocument? {
        try await map(
            "SELECT \(unescaped: Self.documentColumns) FROM documents WHERE id = \(id)",
            "reading the document '\(id)'",
            Self.document(from:)
        ).first
    }

    /// One statement, which counts the pages without decoding them.
    func pageCountAndLayer(documentID: String, name: String) async throws -> (pageCount: Int?, layer: StoredLayer?) {
        let found = try await map(
            """
            SELECT page_count,
                (SELECT revision FROM layers WHERE document_id = documents.id AND name = \(name))
            FROM documents WHERE id = \(documentID)
            """,
            "reading the document '\(documentID)' and its layer '\(name)'"
        ) { try $0.decode((Int, Int64?).self) }.first
        guard let (pageCount, revision) = found else { return (nil, nil) }
        return (pageCount, revision.map { StoredLayer(documentID: documentID, name: name, revision: $0) })
    }

    func documents(_ query: DocumentQuery) async throws -> DocumentListing {
        var binds = PostgresBindings()
        var filter = ""
        if let title = query.titleFilter, !title.isEmpty {
            let escaped =
                title
                .replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "%", with: "\\%")
                .replacingOccurrences(of: "_", with: "\\_")
            binds.append("%\(escaped)%")
            filter = "WHERE title ILIKE $1 ESCAPE '\\'"
        }
        let total =
            try await value(
                PostgresQuery(unsafeSQL: "SELECT count(*) FROM documents \(filter)", binds: binds),
                as: Int.self,
                "counting the documents"
            ) ?? 0
        // The order of SQLite's: byte order (the columns' "C" collation), documents without a
        // title before the others.
        let direction = query.ascending ? "ASC" : "DESC"
        let order =
            query.order == .title
            ? "title \(direction) NULLS \(query.ascending ? "FIRST" : "LAST"), id \(direction)"
            : "created_at \(direction), id \(direction)"
        // The page's bounds as numbers in the statement, so that its (generic) plan knows how few
        // rows it takes.
        let sql = """
            SELECT \(Self.documentColumns) FROM documents \(filter) ORDER BY \(order)
            LIMIT \(max(0, query.limit)) OFFSET \(max(0, query.offset))
            """
        let documents = try await map(
            PostgresQuery(unsafeSQL: sql, binds: binds),
            "listing the documents",
            Self.document(from:)
        )
        return DocumentListing(documents: documents, totalCount: total)
    }

    func insertDocument(_ document: StoredDocument) async throws -> Bool {
        let pages: String
        let pdfID: String?
        do {
            pages = String(decoding: try JSONEncoder().encode(document.pages), as: UTF8.self)
            pdfID = try document.pdfID.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        } catch {
            throw StorageError(
                .backendFailure, "The pages of the document '\(document.id)' cannot be encoded: \(error)")
        }
        let inserted = try await rows(
            """
            INSERT INTO documents (id, title, sha256, byte_size, pages, pdf_id, password_protected, created_at)
            VALUES (\(document.id), \(document.title), \(document.sourcePDFSHA256), \(document.byteSize), \
            \(pages)::jsonb, \(pdfID)::jsonb, \(document.isPasswordProtected), \(document.createdAt.timeIntervalSince1970))
            ON CONFLICT (id) DO NOTHING RETURNING 1
            """,
            "storing the document '\(document.id)'"
        )
        return !inserted.isEmpty
    }

    func deleteDocument(id: String) async throws -> Bool {
        // The foreign keys remove base records, layers (and with them records and push state) and
        // attachments.
        try await !rows(
            "DELETE FROM documents WHERE id = \(id) RETURNING 1",
            "deleting the document '\(id)'"
        ).isEmpty
    }

    func isPDFReferenced(sha256: String) async throws -> Bool {
        try await !rows(
            "SELECT 1 FROM documents WHERE sha256 = \(sha256) LIMIT 1",
            "looking for documents of the PDF \(sha256)"
        ).isEmpty
    }

    func lockContent(sha256: String) async throws {
        try await execute(
            "SELECT pg_advisory_xact_lock(\(PostgresBackend.contentLockClass), hashtext(\(sha256)))",
            "locking the content \(sha256)"
        )
    }

    func insertBaseRecords(documentID: String, _ records: [RecordWrite]) async throws {
        try await insert(
            records.keepingLast(by: \.id),
            "INSERT INTO base_records (document_id, id, kind, group_name, pdf_object_id, content)",
            types: ["text", "text", "text", "text", "bigint", "bytea"],
            suffix: """
                ON CONFLICT (document_id, id) DO UPDATE SET kind = EXCLUDED.kind, group_name = EXCLUDED.group_name,
                    pdf_object_id = EXCLUDED.pdf_object_id, content = EXCLUDED.content
                """,
            "storing the base records of the document '\(documentID)'",
            size: \.content.count
        ) { record, bindings in
            bindings.append(documentID)
            bindings.append(record.id)
            bindings.append(record.kind.rawValue)
            bindings.append(record.group)
            bindings.append(record.pdfObjectID)
            try bindings.append(record.content)
        }
    }

    func baseRecords(documentID: String) async throws -> [StoredRecord] {
        try await map(
            """
            SELECT id, kind, group_name, pdf_object_id, content FROM base_records WHERE document_id = \(documentID)
            ORDER BY id
            """,
            "reading the base records of the document '\(documentID)'"
        ) { row in
            let (id, kind, group, pdfObjectID, content) = try row.decode((String, String, String?, Int?, Data).self)
            return StoredRecord(
                id: id,
                kind: RecordKind(rawValue: kind),
                revision: 0,
                group: group,
                pdfObjectID: pdfObjectID,
                content: content,
                updatedAt: Date(timeIntervalSince1970: 0)
            )
        }
    }

    static func document(from row: PostgresRow) throws -> StoredDocument {
        let (id, title, sha256, byteSize, pages, pdfID, isPasswordProtected, createdAt) = try row.decode(
            (String, String?, String, Int, String, String?, Bool, Double).self)
        do {
            return StoredDocument(
                id: id,
                title: title,
                sourcePDFSHA256: sha256,
                byteSize: byteSize,
                pages: try JSONDecoder().decode([PageInfo].self, from: Data(pages.utf8)),
                pdfID: try pdfID.map { try JSONDecoder().decode(DocumentPDFID.self, from: Data($0.utf8)) },
                isPasswordProtected: isPasswordProtected,
                createdAt: Date(timeIntervalSince1970: createdAt)
            )
        } catch {
            throw StorageError(.corrupted, "The stored document '\(id)' cannot be read: \(error)")
        }
    }
}
