import Foundation
import GRDB
import InstantJSON

extension LocalStore {
    /// The most changes one push carries; servers refuse more than 5,000 by default.
    static let maximumChangesPerPush = 1_000
    /// The most bytes of record content one push carries (a push of one larger record is still
    /// sent); servers refuse sync bodies over 8 MiB by default.
    static let maximumPushContentSize = 2 * 1024 * 1024

    /// The push to send: the one in flight if its answer never arrived (resent unchanged), else a
    /// new one made of the oldest pending changes (up to ``maximumChangesPerPush`` and
    /// ``maximumPushContentSize``; the rest go in the next push), or `nil` when there is nothing to
    /// push.
    func nextPush(documentID: String, layer: String) throws(InstantError) -> PendingPush? {
        try write { db in
            if let row = try Row.fetchOne(
                db, sql: "SELECT * FROM pushes WHERE document_id = ? AND layer = ?", arguments: [documentID, layer])
            {
                let changes = try JSONValue(parsing: row["changes"] as Data).arrayValue ?? []
                return PendingPush(
                    pushID: row["push_id"], baseRevision: row["base_revision"],
                    changes: changes.compactMap(Self.pushedChange))
            }
            let rows = try Row.fetchAll(
                db, sql: "SELECT * FROM records WHERE document_id = ? AND layer = ? AND pending = 1 ORDER BY id",
                arguments: [documentID, layer])
            guard !rows.isEmpty,
                let layerRow = try Row.fetchOne(
                    db, sql: "SELECT * FROM layers WHERE document_id = ? AND name = ?", arguments: [documentID, layer])
            else { return nil }
            var changes: [PushedChange] = []
            var contentSize = 0
            for row in rows {
                let content = row["local_content"] as Data?
                contentSize += content?.count ?? 0
                if !changes.isEmpty,
                    changes.count == Self.maximumChangesPerPush || contentSize > Self.maximumPushContentSize
                {
                    break
                }
                changes.append(
                    PushedChange(
                        id: row["id"], kind: row["kind"], content: content.flatMap { try? JSONValue(parsing: $0) },
                        group: Self.groupAssignment(row), version: row["local_version"]))
            }
            let push = PendingPush(
                pushID: layerRow["next_push_id"], baseRevision: layerRow["revision"], changes: changes)
            try db.execute(
                sql: "INSERT INTO pushes (document_id, layer, push_id, base_revision, changes) VALUES (?, ?, ?, ?, ?)",
                arguments: [
                    documentID, layer, push.pushID, push.baseRevision,
                    JSONValue.array(changes.map(Self.storedValue)).serialized(),
                ])
            try db.execute(
                sql: "UPDATE layers SET next_push_id = ? WHERE document_id = ? AND name = ?",
                arguments: [push.pushID + 1, documentID, layer])
            return push
        }
    }

    /// The layer's revision (the base of a fetch).
    func revision(documentID: String, layer: String) throws(InstantError) -> Int64 {
        try self.layer(documentID: documentID, name: layer)?.revision ?? 0
    }

    /// Applies a sync answer in one transaction: the server's records, the acknowledgement of the
    /// push in flight (its changes stop being pending unless edited again since), the new revision.
    /// - Returns: Whether changes the server has not seen remain, and how the records the app sees
    ///   changed.
    func apply(_ answer: SyncAnswer, push: PendingPush?, documentID: String, layer: String) throws(InstantError)
        -> (hasLocalChanges: Bool, change: InstantDocumentChange)
    {
        try write { db in
            try Self.requireLayer(db, documentID: documentID, layer: layer)
            let listed = Set(answer.records.map(\.id))
            let unlisted =
                answer.reset
                ? try String.fetchAll(
                    db,
                    sql: "SELECT id FROM records WHERE document_id = ? AND layer = ? AND server_content IS NOT NULL",
                    arguments: [documentID, layer]
                ).filter { !listed.contains($0) } : []
            var acknowledged: PendingPush?
            if let push, let pushID = answer.acknowledgedPushID, pushID >= push.pushID { acknowledged = push }
            let touched = listed.union(unlisted).union(acknowledged?.changes.map(\.id) ?? [])
            let before = try Self.visibleContents(db, documentID: documentID, layer: layer, ids: touched)
            if answer.reset {
                for id in unlisted {
                    try db.execute(
                        sql: "DELETE FROM records WHERE document_id = ? AND layer = ? AND id = ? AND pending = 0",
                        arguments: [documentID, layer, id])
                    try db.execute(
                        sql: "UPDATE records SET server_content = NULL WHERE document_id = ? AND layer = ? AND id = ?",
                        arguments: [documentID, layer, id])
                }
            }
            for record in answer.records {
                try Self.storeServerVersion(db, record, documentID: documentID, layer: layer)
            }
            if let push = acknowledged {
                for change in push.changes {
                    try db.execute(
                        sql: """
                            UPDATE records SET pending = 0, local_content = NULL, local_group = NULL, local_group_set = 0
                            WHERE document_id = ? AND layer = ? AND id = ? AND local_version = ?
                            """,
                        arguments: [documentID, layer, change.id, change.version])
                    try db.execute(
                        sql: """
                            DELETE FROM records WHERE document_id = ? AND layer = ? AND id = ? AND pending = 0
                            AND server_content IS NULL
                            """,
                        arguments: [documentID, layer, change.id])
                }
                try db.execute(
                    sql: "DELETE FROM pushes WHERE document_id = ? AND layer = ?", arguments: [documentID, layer])
            }
            try db.execute(
                sql: "UPDATE layers SET revision = ? WHERE document_id = ? AND name = ?",
                arguments: [answer.revision, documentID, layer])
            let after = try Self.visibleContents(db, documentID: documentID, layer: layer, ids: touched)
            var change = InstantDocumentChange(origin: .server)
            for id in touched {
                switch (before[id], after[id]) {
                case (nil, .some): change.added.insert(id)
                case (.some, nil): change.removed.insert(id)
                case (.some(let old), .some(let new)) where old != new:
                    // Bytes differ; the content may not (the server writes JSON its own way).
                    if (try? JSONValue(parsing: old)) != (try? JSONValue(parsing: new)) { change.updated.insert(id) }
                default: break
                }
            }
            return (try Self.hasPendingChanges(db, documentID: documentID, layer: layer), change)
        }
    }

    /// The content the app sees (the pending local version, else the server's) of those of the
    /// given records it sees, as stored bytes, inside the caller's transaction.
    static func visibleContents(_ db: Database, documentID: String, layer: String, ids: Set<String>) throws
        -> [String: Data]
    {
        var contents: [String: Data] = [:]
        let statement = try db.cachedStatement(
            sql: """
                SELECT CASE WHEN pending = 1 THEN local_content ELSE server_content END FROM records
                WHERE document_id = ? AND layer = ? AND id = ?
                """)
        for id in ids {
            if let data = try Data.fetchOne(statement, arguments: [documentID, layer, id]) { contents[id] = data }
        }
        return contents
    }

    private static func storedValue(_ change: PushedChange) -> JSONValue {
        var value = change.wireValue
        if case .object(var object) = value {
            object["version"] = .integer(change.version)
            value = .object(object)
        }
        return value
    }

    /// The group a pending record's push assigns: the one its local edit chose, if it chose one.
    static func groupAssignment(_ row: Row) -> GroupAssignment {
        (row["local_group_set"] as Bool? ?? false) ? .assigned(row["local_group"]) : .unchanged
    }

    private static func pushedChange(_ value: JSONValue) -> PushedChange? {
        guard let id = value["id"]?.stringValue, let kind = value["kind"]?.stringValue,
            let version = value["version"]?.intValue
        else { return nil }
        return PushedChange(
            id: id, kind: kind, content: value["op"]?.stringValue == "put" ? value["content"] : nil,
            group: GroupAssignment(member: value["group"]) ?? .unchanged, version: Int64(version))
    }
}
