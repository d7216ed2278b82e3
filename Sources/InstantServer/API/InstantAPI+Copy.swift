import Foundation
import Hummingbird
import InstantJSON

extension InstantAPI {
    /// `POST /api/copy_document` with `{"document_id", "new_document_id"?}`: a copy of the document
    /// with every layer (see ``InstantStorage/copyDocument(id:to:layer:initialChanges:attachments:)``).
    func copyDocument(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let body = try await jsonBody(request)
        guard let sourceID = body["document_id"]?.stringValue else {
            throw APIError.badRequest("The body needs 'document_id': the id of the document to copy.")
        }
        try Identifiers.validate(sourceID, what: "document id")
        let copyID = try newDocumentID(body["new_document_id"]?.stringValue)
        let copy = try await storage.copyDocument(id: sourceID, to: copyID)
        context.logger.info("Document copied", metadata: ["document_id": "\(sourceID)", "copy": "\(copyID)"])
        return Self.data(["document_id": .string(copy.id)])
    }

    /// `POST /api/documents/{id}[/layers/{name}]/copy_with_instant_json`: a new document with the
    /// PDF and base records of this one, whose default layer is this layer with the uploaded
    /// Instant JSON (a multipart `instant.json` part or the JSON body; none copies the layer as it
    /// is) applied. Answers as an upload does.
    func copyWithInstantJSON(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let document = try await requireDocument(try documentID(context))
        let layer = try layerName(context)
        try await requireLayer(documentID: document.id, name: layer)
        let body = try await body(request)
        var payload: Data? = body
        if let boundary = MultipartForm.boundary(contentType: request.headers[.contentType] ?? "") {
            payload = try MultipartForm.parse(body, boundary: boundary).part(named: "instant.json")?.data
        }
        var plan: InstantJSONImport?
        if let payload, !payload.isEmpty {
            plan = try await LargeWork.run(bytes: payload.count) { [identifiers] in
                (try? JSONValue.parse(payload)) == .null
                    ? nil
                    : try InstantJSONImport(
                        data: payload, pageCount: document.pageCount, lenient: false, identifiers: identifiers)
            }
        }
        var changes: [RecordChange] = []
        if let plan {
            let existing = try await storage.records(documentID: document.id, layer: layer, kind: nil).map {
                (id: $0.id, pdfObjectID: $0.pdfObjectID)
            }
            changes = plan.changes(existing: existing)
        }
        let copy = try await storage.copyDocument(
            id: document.id, to: try newDocumentID(nil), layer: layer, initialChanges: changes,
            attachments: plan?.attachments ?? [])
        // As the existing server answers this route: the fields at the top level, without `data`.
        return Self.respond([
            "documentId": .string(copy.id),
            "errors": [],
            "password_protected": .bool(copy.isPasswordProtected),
            "sourcePdfSha256": .string(copy.sourcePDFSHA256),
            "title": .optional(copy.title),
            "createdAt": .string(Self.timestamp(copy.createdAt)),
        ])
    }

    /// A requested id for a new document, checked, or a new ULID.
    func newDocumentID(_ requested: String?) throws(APIError) -> String {
        guard let requested else { return identifiers.next().string }
        try Identifiers.validate(requested, what: "document id")
        return requested
    }
}
