import Foundation
import PostgresNIO

extension PostgresTransaction {
    /// The columns ``record(from:)`` reads, in its order.
    static let recordColumns =
        "id, kind, revision, deleted, group_name, created_by, updated_by, pdf_object_id, content, updated_at"

    /// The condition of the records changed after the revision of `parameter`, written so that
    /// the generic plan of a prepared statement reads them from the revision index.
    ///
    /// A generic plan does not know the revision, and PostgreSQL guesses that `revision > $n`
    /// matches a third of the layer's records. Where the layer is most of the table (one large
    /// document), that guess plans a scan of every record of the table, for changes that are
    /// usually a handful: 2.6 ms a group at 18,000 records, growing with the table
    /// (docs/BENCHMARKS.md). Bounded on both sides, the condition is a range, which PostgreSQL
    /// guesses at half a percent of the records, and reads through the index. The upper bound
    /// holds for every revision.
    static func changed(after parameter: String) -> String {
        "revision > \(parameter) AND revision <= \(Int64.max)"
    }

    func liveRecords(
        documentID: String, layer: String, kind: RecordKind?, onPage pageIndex: Int?, offset: Int, limit: Int?
    ) async throws -> [StoredRecord] {
        let page = pageIndex.map(Int64.init)
        let (skip, count) = (Int64(offset), limit.map(Int64.init))
        // The page's bounds as numbers in the statement, so that its (generic) plan knows how few
        // rows it takes.
        return try await map(
            """
            SELECT \(unescaped: Self.recordColumns) FROM records
            WHERE document_id = \(documentID) AND layer = \(layer) AND NOT deleted
                AND (\(kind?.rawValue)::text IS NULL OR kind = \(kind?.rawValue))
                AND (\(page)::bigint IS NULL OR (
                    SELECT CASE WHEN jsonb_typeof(value -> 'pageIndex') = 'number'
                        THEN (value ->> 'pageIndex')::numeric END
                    FROM (SELECT convert_from(content, 'UTF8')::jsonb AS value) AS parsed
                ) = \(page))
            ORDER BY id LIMIT \(unescaped: count.map(String.init) ?? "ALL") OFFSET \(unescaped: String(skip))
            """,
            "reading the records of the layer '\(layer)' of the document '\(documentID)'",
            Self.record(from:)
        )
    }

    func records(documentID: String, layer: String, ids: [String]) async throws -> [StoredRecord] {
        guard !ids.isEmpty else { return [] }
        return try await rows(
            PreparedStatements.RecordsByID(documentID: documentID, layer: layer, ids: ids),
            "reading \(ids.count) records of the layer '\(layer)' of the document '\(documentID)'")
    }

    func comments(documentID: String, layer: String, threadRoots: [String]) async throws -> [StoredRecord] {
        guard !threadRoots.isEmpty else { return [] }
        return try await map(
            """
            SELECT \(unescaped: Self.recordColumns) FROM records
            WHERE document_id = \(documentID) AND layer = \(layer) AND thread_root = ANY(\(threadRoots)) AND NOT deleted
            ORDER BY id
            """,
            "reading the comment threads of the layer '\(layer)' of the document '\(documentID)'",
            Self.record(from:)
        )
    }

    func records(documentID: String, layer: String, changedAfter revision: Int64) async throws -> [StoredRecord] {
        try await rows(
            PreparedStatements.RecordsChangedAfter(documentID: documentID, layer: layer, revision: revision),
            "reading the changes after revision \(revision) of the layer '\(layer)' of the document '\(documentID)'")
    }

    func upsert(_ rows: [RecordRow], documentID: String, layer: String) async throws {
        try await insert(
            rows.keepingLast(by: \.record.id),
            """
            INSERT INTO records (document_id, layer, id, kind, revision, deleted, group_name, created_by, updated_by,
                pdf_object_id, content, updated_at, thread_root)
            """,
            types: [
                "text", "text", "text", "text", "bigint", "boolean", "text", "text", "text", "bigint", "bytea",
                "double precision", "text",
            ],
            suffix: """
                ON CONFLICT (document_id, layer, id) DO UPDATE SET kind = EXCLUDED.kind, revision = EXCLUDED.revision,
                    deleted = EXCLUDED.deleted, group_name = EXCLUDED.group_name, created_by = EXCLUDED.created_by,
                    updated_by = EXCLUDED.updated_by, pdf_object_id = EXCLUDED.pdf_object_id,
                    content = EXCLUDED.content, updated_at = EXCLUDED.updated_at, thread_root = EXCLUDED.thread_root
                """,
            "writing \(rows.count) records of the layer '\(layer)' of the document '\(documentID)'",
            size: \.record.content.count
        ) { row, bindings in
            let record = row.record
            bindings.append(documentID)
            bindings.append(layer)
            bindings.append(record.id)
            bindings.append(record.kind.rawValue)
            bindings.append(record.revision)
            bindings.append(record.isDeleted)
            bindings.append(record.group)
            bindings.append(record.createdBy)
            bindings.append(record.updatedBy)
            bindings.append(record.pdfObjectID)
            try bindings.append(record.content)
            bindings.append(record.updatedAt.timeIntervalSince1970)
            bindings.append(row.threadRoot)
        }
        recordStatistics?.noteWritten(rows.count)
    }

    func copyLiveRecords(
        documentID: String,
        from source: String,
        to target: String,
        revision: Int64,
        at time: Date
    ) async throws -> Int {
        let copied =
            try await value(
                """
                WITH copied AS (
                    INSERT INTO records (document_id, layer, id, kind, revision, deleted, group_name, created_by,
                        updated_by, pdf_object_id, content, updated_at, thread_root)
                    SELECT document_id, \(target), id, kind, \(revision), false, group_name, created_by, updated_by,
                        pdf_object_id, content, \(time.timeIntervalSince1970), thread_root
                    FROM records WHERE document_id = \(documentID) AND layer = \(source) AND NOT deleted
                    RETURNING 1
                )
                SELECT count(*) FROM copied
                """,
                as: Int.self,
                "copying the layer '\(source)' of the document '\(documentID)' to '\(target)'"
            ) ?? 0
        recordStatistics?.noteWritten(copied)
        return copied
    }

    func lastPushID(documentID: String, layer: String, client: ClientIdentity) async throws -> Int64? {
        try await value(
            """
            SELECT push_id FROM client_pushes WHERE document_id = \(documentID) AND layer = \(layer)
                AND user_scope = \(client.userScope) AND client_id = \(client.clientID)
            """,
            as: Int64.self,
            "reading the last push of a client on the layer '\(layer)' of the document '\(documentID)'"
        )
    }

    func setLastPushID(
        _ pushID: Int64,
        documentID: String,
        layer: String,
        client: ClientIdentity,
        revision: Int64
    ) async throws {
        try await execute(
            """
            INSERT INTO client_pushes (document_id, layer, user_scope, client_id, push_id, revision)
            VALUES (\(documentID), \(layer), \(client.userScope), \(client.clientID), \(pushID), \(revision))
            ON CONFLICT (document_id, layer, user_scope, client_id)
                DO UPDATE SET push_id = EXCLUDED.push_id, revision = EXCLUDED.revision
            """,
            "storing the last push of a client on the layer '\(layer)' of the document '\(documentID)'"
        )
    }

    /// One statement (``PreparedStatements/GroupReads``).
    func groupReads(
        documentID: String, layer: String, ids: [String], clients: [ClientIdentity], changedAfter: Int64?
    ) async throws -> GroupReads {
        guard !ids.isEmpty || !clients.isEmpty || changedAfter != nil else {
            return GroupReads(records: [], lastPushIDs: [:], changed: [])
        }
        return try await readLayerAndGroup(
            documentID: documentID, layer: layer, ids: ids, clients: clients, changedAfter: changedAfter
        ).reads
    }

    /// One statement (``PreparedStatements/GroupReads``).
    func readGroup(
        documentID: String, layer: String, ids: [String], clients: [ClientIdentity], changedAfter: Int64?
    ) async throws -> LayerSnapshot? {
        try await readLayerAndGroup(
            documentID: documentID, layer: layer, ids: ids, clients: clients, changedAfter: changedAfter
        ).snapshot
    }

    /// What ``PreparedStatements/GroupReads`` reads, and the layer with it (`nil` when missing).
    private func readLayerAndGroup(
        documentID: String, layer: String, ids: [String], clients: [ClientIdentity], changedAfter: Int64?
    ) async throws -> (reads: GroupReads, snapshot: LayerSnapshot?) {
        let rows = try await rows(
            PreparedStatements.GroupReads(
                documentID: documentID, layer: layer, ids: ids, clients: clients, changedAfter: changedAfter),
            "reading \(ids.count) records, the last pushes of \(clients.count) clients and the changes of the layer "
                + "'\(layer)' of the document '\(documentID)'")
        var read = GroupReads(records: [], lastPushIDs: [:], changed: [])
        var pushes: [String: Int64] = [:]
        var layerRow: (version: String, revision: Int64, pageCount: Int)?
        for row in rows {
            switch row {
            case .record(let record): read.records.append(record)
            case .changed(let record): read.changed.append(record)
            case .push(let userScope, let clientID, let pushID): pushes["\(userScope)\u{0}\(clientID)"] = pushID
            case .layer(let version, let revision, let pageCount): layerRow = (version, revision, pageCount)
            }
        }
        read.changed.sort { ($0.revision, $0.id) < ($1.revision, $1.id) }
        for client in clients { read.lastPushIDs[client] = pushes["\(client.userScope)\u{0}\(client.clientID)"] }
        return (
            read,
            layerRow.map {
                LayerSnapshot(
                    layer: StoredLayer(documentID: documentID, name: layer, revision: $0.revision),
                    pageCount: $0.pageCount, version: $0.version, reads: read)
            }
        )
    }

    /// One statement: the records, the revision, the push ids and the notifications of a group
    /// transaction (``PreparedStatements/FinishCommits``); none when there is nothing to write.
    /// More than ``rowsPerStatement`` rows or ``bytesPerStatement`` of them go ahead instead, in
    /// ``upsert(_:documentID:layer:)``'s batches.
    func finishCommits(
        documentID: String, layer: String, writing rows: [RecordRow], revision: Int64?, pushes: [StoredPush],
        announcing events: [StorageEvent]
    ) async throws -> String? {
        var rows = rows.keepingLast(by: \.record.id)
        if rows.count > Self.rowsPerStatement || Self.byteSize(of: rows) > Self.bytesPerStatement {
            try await upsert(rows, documentID: documentID, layer: layer)
            rows = []
        }
        return try await finishCommits(
            documentID: documentID, layer: layer, rows: rows, revision: revision, pushes: pushes, events: events,
            ifVersion: nil, absent: []
        ).written
    }

    /// One statement (``PreparedStatements/FinishCommits``) with the version of the layer's row
    /// and the ids assumed absent, whatever the number of rows up to ``bytesPerStatement`` of them.
    func finishCommits(
        documentID: String, layer: String, writing rows: [RecordRow], revision: Int64?, pushes: [StoredPush],
        announcing events: [StorageEvent], ifUnchangedSince version: String, assumingAbsent absent: [String]
    ) async throws -> (wrote: Bool, written: String?) {
        let rows = rows.keepingLast(by: \.record.id)
        guard Self.byteSize(of: rows) <= Self.bytesPerStatement else { return (false, nil) }
        return try await finishCommits(
            documentID: documentID, layer: layer, rows: rows, revision: revision, pushes: pushes, events: events,
            ifVersion: version, absent: absent)
    }

    /// Runs ``PreparedStatements/FinishCommits`` unless there is nothing to write; returns whether
    /// it wrote, and the version of the layer's row it wrote.
    private func finishCommits(
        documentID: String, layer: String, rows: [RecordRow], revision: Int64?, pushes: [StoredPush],
        events: [StorageEvent], ifVersion: String?, absent: [String]
    ) async throws -> (wrote: Bool, written: String?) {
        let payloads = try events.flatMap { try PostgresBackend.payloads(.committed($0)) }
        guard !rows.isEmpty || revision != nil || !pushes.isEmpty || !payloads.isEmpty else { return (true, nil) }
        let answer = try await self.rows(
            PreparedStatements.FinishCommits(
                documentID: documentID, layer: layer, revision: revision, pushes: pushes, payloads: payloads,
                rows: rows, ifVersion: ifVersion, absent: absent),
            "finishing the commits to the layer '\(layer)' of the document '\(documentID)'"
        ).first
        guard let answer, answer.0 else { return (false, nil) }
        recordStatistics?.noteWritten(rows.count)
        return (true, answer.2)
    }

    /// The bytes of the rows' contents.
    private static func byteSize(of rows: [RecordRow]) -> Int {
        rows.reduce(0) { $0 + $1.record.content.count }
    }

    static func record(from row: PostgresRow) throws -> StoredRecord {
        let (id, kind, revision, isDeleted, group, createdBy, updatedBy, pdfObjectID, content, updatedAt) =
            try row.decode((String, String, Int64, Bool, String?, String?, String?, Int?, Data, Double).self)
        return StoredRecord(
            id: id,
            kind: RecordKind(rawValue: kind),
            revision: revision,
            isDeleted: isDeleted,
            group: group,
            createdBy: createdBy,
            updatedBy: updatedBy,
            pdfObjectID: pdfObjectID,
            content: content,
            updatedAt: Date(timeIntervalSince1970: updatedAt)
        )
    }
}
