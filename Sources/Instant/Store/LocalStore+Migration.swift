import Foundation
import GRDB
import InstantJSON

extension LocalStore {
    /// The Instant JSON format version of the records this version of the SDK stores.
    static let contentVersion = 2

    /// Rewrites a layer's stored records from older Instant JSON format versions to the current
    /// one (annotations of format 1 carry their `text` as a plain string; format 2 as
    /// `{"format": "plain", "value": ...}`), in one transaction.
    /// - Parameter progress: Called with (records done, records in all).
    /// - Returns: Whether the layer has changes the server has not seen.
    func migrateContent(documentID: String, layer: String, progress: (Int, Int) -> Void) throws(InstantError)
        -> Bool
    {
        try write { db in
            let rows = try Row.fetchAll(
                db,
                sql: "SELECT id, server_content, local_content FROM records WHERE document_id = ? AND layer = ?",
                arguments: [documentID, layer])
            for (index, row) in rows.enumerated() {
                for column in ["server_content", "local_content"] {
                    guard let data = row[column] as Data?, let value = try? JSONValue(parsing: data),
                        let upgraded = Self.upgraded(value), upgraded != value
                    else { continue }
                    try db.execute(
                        sql: "UPDATE records SET \(column) = ? WHERE document_id = ? AND layer = ? AND id = ?",
                        arguments: [upgraded.serialized(), documentID, layer, row["id"] as String])
                }
                progress(index + 1, rows.count)
            }
            try db.execute(
                sql: "UPDATE layers SET content_version = ? WHERE document_id = ? AND name = ?",
                arguments: [Self.contentVersion, documentID, layer])
            return try Self.hasPendingChanges(db, documentID: documentID, layer: layer)
        }
    }

    /// A record of an older format version in the current one, or `nil` if it is not a record.
    static func upgraded(_ value: JSONValue) -> JSONValue? {
        guard case .object(var object) = value else { return nil }
        guard let version = object["v"]?.intValue, version < contentVersion,
            object["type"]?.stringValue?.hasPrefix("pspdfkit/") == true
        else { return value }
        if let text = object["text"]?.stringValue {
            object["text"] = ["format": "plain", "value": .string(text)]
        }
        object["v"] = .integer(Int64(contentVersion))
        return .object(object)
    }

    /// Replaces a layer's records with a fresh snapshot (after its pending changes were pushed) and
    /// clears its refetch mark, in one transaction.
    func replaceRecords(documentID: String, layer: String, revision: Int64, records: [SyncRecord])
        throws(InstantError)
    {
        try write { db in
            try Self.requireLayer(db, documentID: documentID, layer: layer)
            try db.execute(
                sql: "DELETE FROM records WHERE document_id = ? AND layer = ?", arguments: [documentID, layer])
            try db.execute(
                sql: "DELETE FROM pushes WHERE document_id = ? AND layer = ?", arguments: [documentID, layer])
            for record in records where record.content != nil {
                try Self.storeServerVersion(db, record, documentID: documentID, layer: layer)
            }
            try db.execute(
                sql: """
                    UPDATE layers SET revision = ?, needs_refetch = 0, content_version = ?
                    WHERE document_id = ? AND name = ?
                    """,
                arguments: [revision, Self.contentVersion, documentID, layer])
        }
    }
}
