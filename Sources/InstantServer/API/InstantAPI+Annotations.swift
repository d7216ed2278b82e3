import Foundation
import Hummingbird
import InstantJSON

extension InstantAPI {
    /// The most annotations a JSON listing returns; the rest needs `offset` or NDJSON.
    static let annotationPageLimit = 1000

    /// `GET .../annotations` and `GET .../pages/{pageIndex}/annotations`: JSON with at most 1000
    /// records (`truncated` tells if there are more; `offset` and `limit` page through them), or
    /// every record as NDJSON with `Accept: application/x-ndjson`.
    func listAnnotations(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let id = try documentID(context)
        let layer = try layerName(context)
        let document = try await requireDocument(id)
        try await requireLayer(documentID: id, name: layer)
        var page: Int?
        if let pageText = context.parameters.get("pageIndex") {
            guard let index = Int(pageText), index >= 0, index < document.pageCount else {
                throw APIError.notFound(
                    "The document '\(id)' has no page \(pageText) (it has \(document.pageCount) pages, from 0)."
                )
            }
            page = index
        }
        if request.headers[.accept]?.contains("application/x-ndjson") == true {
            let records = try await storage.recordPage(documentID: id, layer: layer, kind: .annotation, onPage: page)
            var body = ByteBuffer()
            for record in records.records {
                body.writeBytes(Self.recordJSON(record).encoded())
                body.writeInteger(UInt8(ascii: "\n"))
            }
            return Response(status: .ok, headers: [.contentType: "application/x-ndjson"], body: .init(byteBuffer: body))
        }
        let parameters = request.uri.queryParameters
        let offset =
            try parameters["offset"].map { text throws(APIError) in
                guard let value = Int(text), value >= 0 else { throw .badRequest("offset must be an integer ≥ 0.") }
                return value
            } ?? 0
        let limit =
            try parameters["limit"].map { text throws(APIError) in
                guard let value = Int(text), (1...Self.annotationPageLimit).contains(value) else {
                    throw .badRequest("limit must be an integer from 1 to \(Self.annotationPageLimit).")
                }
                return value
            } ?? Self.annotationPageLimit
        let (records, hasMore) = try await storage.recordPage(
            documentID: id, layer: layer, kind: .annotation, onPage: page, offset: offset, limit: limit)
        return Self.data([
            "annotations": .array(records.map(Self.recordJSON)),
            "truncated": .bool(hasMore),
        ])
    }

    /// `GET .../annotations/{annotationID}`.
    func getAnnotation(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let id = try documentID(context)
        let layer = try layerName(context)
        let recordID = try identifier("annotationID", context, what: "annotation id")
        try await requireLayer(documentID: id, name: layer)
        guard let record = try await storage.record(documentID: id, layer: layer, id: recordID), !record.isDeleted,
            record.kind == .annotation
        else { throw APIError.notFound("No annotation has the id '\(recordID)' on this layer.") }
        // As the existing server answers this route: the record at the top level, without `data`.
        return Self.respond(Self.recordJSON(record))
    }

    /// `POST .../annotations`: one `{content, id?, user_id?, group?}` or `{"annotations": [...]}`.
    func createAnnotations(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let id = try documentID(context)
        let layer = try layerName(context)
        let document = try await requireDocument(id)
        try await requireLayer(documentID: id, name: layer)
        let body = try await jsonBody(request)
        if let items = body["annotations"] {
            guard let items = items.arrayValue, !items.isEmpty else {
                throw APIError.badRequest("'annotations' must be a non-empty array of {content, ...} objects.")
            }
            let writes = try items.enumerated().map { index, item throws(APIError) in
                try annotationWrite(item, document: document, path: "annotations[\(index)]", requireID: false)
            }
            let result = try await storage.apply(
                writes.map { .put($0, condition: .absent) },
                documentID: id,
                layer: layer,
                onConditionFailure: .abortBatch
            )
            return Self.data(.array(result.applied.map(Self.createdJSON)))
        }
        let write = try annotationWrite(body, document: document, path: "body", requireID: false)
        _ = try await storage.apply(
            [.put(write, condition: .absent)],
            documentID: id,
            layer: layer,
            onConditionFailure: .abortBatch
        )
        return Self.data(["annotation_id": .string(write.id)])
    }

    /// `PUT .../annotations` with `{"annotations": [{id, content, ...}]}`: all or nothing.
    func updateAnnotations(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let id = try documentID(context)
        let layer = try layerName(context)
        let document = try await requireDocument(id)
        try await requireLayer(documentID: id, name: layer)
        let body = try await jsonBody(request)
        guard let items = body["annotations"]?.arrayValue, !items.isEmpty else {
            throw APIError.badRequest("The body needs 'annotations': a non-empty array of {id, content, ...} objects.")
        }
        let writes = try items.enumerated().map { index, item throws(APIError) in
            try annotationWrite(item, document: document, path: "annotations[\(index)]", requireID: true)
        }
        let result = try await storage.apply(
            writes.map { .put($0, condition: .exists) },
            documentID: id,
            layer: layer,
            onConditionFailure: .abortBatch
        )
        return Self.data(.array(result.applied.map(Self.createdJSON)))
    }

    /// `PUT .../annotations/{annotationID}` with `{content, user_id?, group?}`.
    func updateAnnotation(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let id = try documentID(context)
        let layer = try layerName(context)
        let recordID = try identifier("annotationID", context, what: "annotation id")
        let document = try await requireDocument(id)
        try await requireLayer(documentID: id, name: layer)
        var body = try await jsonBody(request)
        if case .object(var object) = body {
            object["id"] = .string(recordID)
            body = .object(object)
        }
        let write = try annotationWrite(body, document: document, path: "body", requireID: true)
        let result = try await storage.apply(
            [.put(write, condition: .exists)],
            documentID: id,
            layer: layer,
            onConditionFailure: .abortBatch
        )
        return Self.data(result.applied.first.map(Self.recordJSON) ?? [:])
    }

    /// `DELETE .../annotations/{annotationID}`.
    func deleteAnnotation(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let id = try documentID(context)
        let layer = try layerName(context)
        let recordID = try identifier("annotationID", context, what: "annotation id")
        try await requireLayer(documentID: id, name: layer)
        _ = try await storage.apply(
            [.delete(id: recordID, condition: .exists)],
            documentID: id,
            layer: layer,
            onConditionFailure: .abortBatch
        )
        return Self.data([:])
    }

    /// `DELETE .../annotations` with `{"annotationIds": "all" | [ids]}`.
    func deleteAnnotations(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let id = try documentID(context)
        let layer = try layerName(context)
        try await requireLayer(documentID: id, name: layer)
        let body = try await jsonBody(request)
        let ids: [String]
        if body["annotationIds"]?.stringValue == "all" {
            ids = try await storage.records(documentID: id, layer: layer, kind: .annotation).map(\.id)
        } else if let list = body["annotationIds"]?.arrayValue {
            ids = try list.map { value throws(APIError) in
                guard let text = value.stringValue else { throw .badRequest("annotationIds must hold strings.") }
                return text
            }
        } else {
            throw APIError.badRequest("The body needs 'annotationIds': \"all\" or an array of ids.")
        }
        _ = try await storage.apply(
            ids.map { .delete(id: $0, condition: .exists) },
            documentID: id,
            layer: layer,
            onConditionFailure: .abortBatch
        )
        return Self.data([:])
    }

    /// Validates an `{id?, content, user_id?, group?}` object into a record write.
    func annotationWrite(
        _ item: JSONValue,
        document: StoredDocument,
        path: String,
        requireID: Bool
    ) throws(APIError) -> RecordWrite {
        guard let object = item.objectValue else { throw .badRequest("\(path): expected an object") }
        guard let content = object["content"] else { throw .unprocessable("\(path).content: missing") }
        if let problem = RecordValidation.problem(
            kind: .annotation,
            content: content,
            pageCount: document.pageCount,
            path: "\(path).content"
        ) {
            throw .unprocessable(problem)
        }
        var explicitID = object["id"]?.stringValue
        if let value = explicitID { try Identifiers.validate(value, what: "annotation id") }
        if explicitID == nil, requireID {
            explicitID = content["id"]?.stringValue
            guard explicitID != nil else { throw .badRequest("\(path).id: missing") }
        }
        return InstantJSONImport.write(
            kind: .annotation,
            content: content,
            user: object["user_id"]?.stringValue,
            group: object["group"]?.stringValue,
            identifiers: identifiers,
            id: explicitID
        )
    }

    static func createdJSON(_ record: StoredRecord) -> JSONValue {
        [
            "id": .string(record.id),
            "content": (try? JSONValue.parse(record.content)) ?? .null,
            "user_id": .optional(record.createdBy),
            "updatedBy": .optional(record.updatedBy),
            "group": .optional(record.group),
        ]
    }
}
