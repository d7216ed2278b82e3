import Foundation
import Hummingbird
import InstantJSON

extension InstantAPI {
    /// `GET .../document.json`: the layer's records as an Instant JSON document.
    func exportDocumentJSON(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let id = try documentID(context)
        let layer = try layerName(context)
        let document = try await requireDocument(id)
        try await requireLayer(documentID: id, name: layer)
        let export = try await documentJSON(document, layer: layer)
        return try await LargeWork.run(bytes: export.bytes) { Self.respond(export.json) }
    }

    /// The Instant JSON export of a layer, and about how many bytes its JSON has (the records' and
    /// the attachments'). Base records that were changed or deleted on the layer are listed in
    /// `skippedPdfObjectIds`; changed ones also appear with their new content. The records are read
    /// away from the event loop when they are many (``LargeWork``).
    func documentJSON(_ document: StoredDocument, layer: String) async throws -> (json: JSONValue, bytes: Int) {
        let records = try await storage.records(documentID: document.id, layer: layer, kind: nil)
        let base = try await storage.baseRecords(documentID: document.id)
        var bytes = records.reduce(0) { $0 + $1.content.count }
        var (output, attachmentIDs) = try await LargeWork.run(bytes: bytes) {
            Self.instantJSON(of: records, base: base, document: document)
        }
        var attachments: JSONObject = [:]
        for attachmentID in attachmentIDs.sorted() {
            if let attachment = try await storage.attachment(documentID: document.id, sha256: attachmentID) {
                attachments[attachmentID] = [
                    "binary": .string(attachment.data.base64EncodedString()),
                    "contentType": .string(attachment.contentType),
                ]
                bytes += attachment.data.count * 4 / 3
            }
        }
        if !attachments.isEmpty { output["attachments"] = .object(attachments) }
        return (.object(output), bytes)
    }

    /// The members of a layer's Instant JSON export but its attachments, and the attachments its
    /// records refer to.
    private static func instantJSON(of records: [StoredRecord], base: [StoredRecord], document: StoredDocument)
        -> (members: JSONObject, attachmentIDs: Set<String>)
    {
        var sections: [String: [JSONValue]] = [:]
        var attachmentIDs: Set<String> = []
        var liveByObjectID: [Int: StoredRecord] = [:]
        for record in records {
            if let objectID = record.pdfObjectID { liveByObjectID[objectID] = record }
            guard let content = try? JSONValue.parse(record.content) else { continue }
            let key: String
            switch record.kind {
            case .annotation: key = "annotations"
            case .comment: key = "comments"
            case .formFieldValue: key = "formFieldValues"
            case .formField: key = "formFields"
            case .bookmark: key = "bookmarks"
            default: continue
            }
            sections[key, default: []].append(content)
            if let attachment = content["imageAttachmentId"]?.stringValue { attachmentIDs.insert(attachment) }
        }
        var skipped: [Int] = []
        for baseRecord in base {
            guard let objectID = baseRecord.pdfObjectID else { continue }
            if let live = liveByObjectID[objectID],
                (try? JSONValue.parse(live.content)) == (try? JSONValue.parse(baseRecord.content))
            {
                continue
            }
            skipped.append(objectID)
        }
        var output: JSONObject = ["format": .string(InstantJSONImport.format)]
        for (key, values) in sections { output[key] = .array(values) }
        if !skipped.isEmpty { output["skippedPdfObjectIds"] = .array(skipped.sorted().map { .integer(Int64($0)) }) }
        if let pdfID = document.pdfID {
            output["pdfId"] = ["permanent": .string(pdfID.permanent), "changing": .string(pdfID.changing)]
        }
        return (output, attachmentIDs)
    }

    /// `POST .../apply_instant_json`: multipart with an `instant.json` part, or a JSON body.
    /// Strict by default; `?lenient=true` (or a `lenient` part) skips bad records and lists them.
    func applyInstantJSON(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let id = try documentID(context)
        let layer = try layerName(context)
        let document = try await requireDocument(id)
        try await requireLayer(documentID: id, name: layer)
        let body = try await body(request)
        var lenient = request.uri.queryParameters["lenient"].map { $0 == "true" || $0 == "1" } ?? false
        let payload: Data
        if let boundary = MultipartForm.boundary(contentType: request.headers[.contentType] ?? "") {
            let form = try MultipartForm.parse(body, boundary: boundary)
            guard let part = form.part(named: "instant.json") else {
                throw APIError.badRequest("The multipart body has no 'instant.json' part.")
            }
            payload = part.data
            if let value = form.text(named: "lenient") { lenient = value == "true" || value == "1" }
        } else {
            payload = body
        }
        let plan = try await LargeWork.run(bytes: payload.count) { [lenient, identifiers] in
            try InstantJSONImport(
                data: payload, pageCount: document.pageCount, lenient: lenient, identifiers: identifiers)
        }
        let result = try await plan.apply(to: storage, documentID: id, layer: layer)
        var data: JSONObject = ["revision": .integer(result.revision)]
        if lenient {
            data["errors"] = .array(plan.problems.map { ["reason": .string($0)] })
        }
        return Self.data(.object(data))
    }
}
