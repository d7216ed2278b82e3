import Foundation
import InstantJSON

/// A validated Instant JSON document, ready to be applied to a layer.
struct InstantJSONImport {
    /// The records to create or replace.
    var writes: [RecordWrite] = []
    /// PDF objects whose records are to be deleted.
    var skippedPDFObjectIDs: [Int] = []
    /// Records to be deleted unless the import writes them (the originals an upload's XFDF replaces).
    var replacedIDs: [String] = []
    /// Attachments to store, each with the SHA-256 of its bytes (hashed as the import is checked,
    /// off the event loop for a large import).
    var attachments: [StoredAttachment] = []
    /// The problems skipped in lenient mode.
    var problems: [String] = []

    /// The Instant JSON format identifier.
    static let format = "https://pspdfkit.com/instant-json/v1"

    /// Validates the document. In strict mode the first problem throws 422; in lenient mode bad
    /// records are skipped and listed in ``problems``.
    init(data: Data, pageCount: Int, lenient: Bool, identifiers: ULIDGenerator) throws(APIError) {
        guard let document = try? JSONValue.parse(data), let object = document.objectValue else {
            throw .unprocessable("instant.json: not a JSON object")
        }
        guard let format = object["format"]?.stringValue, format == Self.format else {
            throw .unprocessable("instant.json.format: expected \"\(Self.format)\"")
        }
        let sections: [(String, RecordKind)] = [
            ("annotations", .annotation), ("comments", .comment), ("formFieldValues", .formFieldValue),
            ("formFields", .formField), ("bookmarks", .bookmark),
        ]
        for (key, kind) in sections {
            guard let value = object[key] else { continue }
            guard let items = value.arrayValue else {
                throw .unprocessable("\(key): expected an array")
            }
            for (index, item) in items.enumerated() {
                let path = "\(key)[\(index)]"
                if let problem = RecordValidation.problem(kind: kind, content: item, pageCount: pageCount, path: path) {
                    if lenient {
                        problems.append(problem)
                        continue
                    }
                    throw .unprocessable(problem)
                }
                writes.append(Self.write(kind: kind, content: item, user: nil, group: nil, identifiers: identifiers))
            }
        }
        if let skipped = object["skippedPdfObjectIds"] {
            guard let items = skipped.arrayValue else { throw .unprocessable("skippedPdfObjectIds: expected an array") }
            for (index, item) in items.enumerated() {
                guard let id = item.integerValue, id > 0, id <= Int64(Int32.max) else {
                    let problem = "skippedPdfObjectIds[\(index)]: expected a positive integer"
                    if lenient {
                        problems.append(problem)
                        continue
                    }
                    throw .unprocessable(problem)
                }
                skippedPDFObjectIDs.append(Int(id))
            }
        }
        if let attachmentsValue = object["attachments"] {
            guard let entries = attachmentsValue.objectValue else {
                throw .unprocessable("attachments: expected an object keyed by attachment id")
            }
            for (key, entry) in entries.sorted(by: { $0.key < $1.key }) {
                let path = "attachments.\(key)"
                guard let binary = entry["binary"]?.stringValue, let bytes = Data(base64Encoded: binary) else {
                    let problem = "\(path).binary: expected base64-encoded bytes"
                    if lenient {
                        problems.append(problem)
                        continue
                    }
                    throw .unprocessable(problem)
                }
                let contentType = entry["contentType"]?.stringValue ?? "application/octet-stream"
                if let rule = Attachment.validateContentType(contentType) {
                    let problem = "\(path).contentType: \(rule)"
                    if lenient {
                        problems.append(problem)
                        continue
                    }
                    throw .unprocessable(problem)
                }
                attachments.append(
                    StoredAttachment(
                        sha256: Attachment.key(for: bytes), contentType: AttachmentContentType.normalized(contentType),
                        data: bytes))
            }
        }
    }

    /// The write for one record: the id comes from the content, or is generated and put into it.
    static func write(
        kind: RecordKind,
        content: JSONValue,
        user: String?,
        group: String?,
        identifiers: ULIDGenerator,
        id explicitID: String? = nil
    ) -> RecordWrite {
        var object = content.objectValue ?? [:]
        let pdfObjectID = object["pdfObjectId"]?.integerValue.map { Int($0) }
        let id: String
        if let explicitID {
            id = explicitID
        } else if let existing = object["id"]?.stringValue {
            id = existing
        } else if kind == .formFieldValue, let name = object["name"]?.stringValue {
            id = FormFieldValue.recordID(forName: name)
        } else if kind == .formField, let name = object["name"]?.stringValue {
            id = FormField.recordID(forName: name)
        } else if let pdfObjectID {
            id = String(pdfObjectID)
        } else {
            id = identifiers.next().string
        }
        if kind == .annotation || kind == .comment || kind == .bookmark {
            object["id"] = .string(id)
        }
        let recordGroup = group ?? object["group"]?.stringValue
        return RecordWrite(
            id: id,
            kind: kind,
            group: recordGroup,
            user: user,
            pdfObjectID: pdfObjectID,
            content: JSONValue.object(object).encoded()
        )
    }

    /// The record changes of the import for a layer whose live records are `existing`: puts for
    /// every record, deletions for the live records of `skippedPdfObjectIds` and ``replacedIDs``
    /// not written here.
    func changes(existing: [(id: String, pdfObjectID: Int?)]) -> [RecordChange] {
        var changes = writes.map { RecordChange.put($0) }
        let skipped = Set(skippedPDFObjectIDs)
        let replaced = Set(replacedIDs)
        let written = Set(writes.compactMap(\.pdfObjectID))
        let writtenIDs = Set(writes.map(\.id))
        for record in existing where !writtenIDs.contains(record.id) {
            if let objectID = record.pdfObjectID, skipped.contains(objectID), !written.contains(objectID) {
                changes.append(.delete(id: record.id))
            } else if replaced.contains(record.id) {
                changes.append(.delete(id: record.id))
            }
        }
        return changes
    }

    /// Stores the attachments, then applies every record change in one transaction.
    @discardableResult
    func apply(to storage: InstantStorage, documentID: String, layer: String) async throws -> CommitResult {
        for attachment in attachments {
            try await storage.putAttachment(documentID: documentID, attachment)
        }
        var existing: [(id: String, pdfObjectID: Int?)] = []
        if !skippedPDFObjectIDs.isEmpty {
            existing = try await storage.records(documentID: documentID, layer: layer, kind: nil).map {
                ($0.id, $0.pdfObjectID)
            }
        }
        return try await storage.apply(
            changes(existing: existing),
            documentID: documentID,
            layer: layer,
            onConditionFailure: .abortBatch
        )
    }
}
