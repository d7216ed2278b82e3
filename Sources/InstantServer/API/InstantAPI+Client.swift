import Foundation
import Hummingbird
import InstantJSON

extension InstantAPI {
    /// `GET /i/d/{documentID}[/l/{layer}]/pdf`: the uploaded PDF for a client (needs `download` or
    /// `read-document`); all layers share the document's one PDF.
    func clientPDF(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let token = try context.clientToken(allowing: ["download", "read-document"])
        let document = try await requireDocument(token.documentID)
        return try await pdfResponse(document, request: request)
    }

    /// `GET /i/d/{documentID}[/l/{layer}]/snapshot`: the layer's revision and live records, the
    /// download a client does before its first sync. A named layer never written mirrors the base
    /// records.
    func clientSnapshot(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let token = try context.clientToken(allowing: ["read-document"])
        let (documentID, layer) = (token.documentID, token.layer)
        _ = try await storage.layerCreatingIfNeeded(documentID: documentID, name: layer)
        // One consistent read: every record with a revision above 0 is every record.
        let changes = try await storage.changes(documentID: documentID, layer: layer, since: 0)
        let body = try await LargeWork.run(writing: StoredRecord.syncJSONSizeEstimate(of: changes.records)) {
            let records = changes.records.map { Self.visible($0, to: token) }.filter { !$0.isDeleted }
            var body = ByteBuffer()
            body.writeString(#"{"revision":\#(changes.revision),"records":"#)
            StoredRecord.writeSyncJSONArray(records, into: &body)
            body.writeString("}")
            return body
        }
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: body))
    }

    /// `POST /api/revoke` with `{"jwts": [...]}` and/or `{"jtis": [...]}`: every token with one of
    /// these ids stops working at once.
    /// The longest token id (`jti`) that can be revoked, in bytes.
    static let maximumTokenIDLength = 1024

    func revoke(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let body = try await jsonBody(request)
        var ids: [String] = []
        var failing: [JSONValue] = []
        if let jwts = body["jwts"] {
            guard let list = jwts.arrayValue else { throw APIError.badRequest("'jwts' must be an array of tokens.") }
            for (index, value) in list.enumerated() {
                let parts = value.stringValue?.split(separator: ".", omittingEmptySubsequences: false) ?? []
                guard parts.count == 3, let payload = ClientTokenVerifier.base64URLDecode(parts[1]),
                    let jti = (try? JSONValue.parse(payload))?["jti"]?.stringValue
                else {
                    failing.append([
                        "path": .string("jwts[\(index)]"),
                        "details": "not a JWT with a 'jti' claim; only tokens with an id can be revoked",
                    ])
                    continue
                }
                ids.append(jti)
            }
        }
        if let jtis = body["jtis"] {
            guard let list = jtis.arrayValue, list.allSatisfy({ $0.stringValue != nil }) else {
                throw APIError.badRequest("'jtis' must be an array of token id strings.")
            }
            ids += list.compactMap(\.stringValue)
        }
        // Every node must hear of a revocation, in one notification per few hundred ids: an id
        // longer than any token needs cannot be one.
        let tooLong = ids.filter { $0.utf8.count > Self.maximumTokenIDLength }
        for id in tooLong {
            failing.append([
                "path": .string(id.prefix(32) + "…"),
                "details": .string(
                    "a token id is at most \(Self.maximumTokenIDLength) bytes; this one is \(id.utf8.count)"),
            ])
        }
        ids.removeAll { $0.utf8.count > Self.maximumTokenIDLength }
        guard !ids.isEmpty || !failing.isEmpty else {
            throw APIError.badRequest("The body needs 'jwts' (tokens) or 'jtis' (token ids) to revoke.")
        }
        if ids.isEmpty, let first = failing.first {
            throw APIError.badRequest(
                "\(first["path"]?.stringValue ?? "jwts"): \(first["details"]?.stringValue ?? "cannot be revoked")"
            )
        }
        try await storage.revokeTokens(ids: ids)
        return Self.respond([
            "result": failing.isEmpty ? "success" : "partial_failure",
            "status": 200,
            "failingPaths": .array(failing),
            "data": .array(ids.map(JSONValue.string)),
        ])
    }
}

extension InstantAPI {
    /// `PUT /i/d/{documentID}[/l/{layer}]/attachments/{sha256}`: a client uploads an attachment
    /// before pushing a record that references it (needs `write`). The body's SHA-256 must be the
    /// id in the path; uploading the same bytes again changes nothing.
    func clientUploadAttachment(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let documentID = try context.clientToken(allowing: ["write"]).documentID
        let expected = try identifier("attachmentID", context, what: "attachment id").lowercased()
        let contentType = try AttachmentContentType.declared(by: request)
        _ = try await requireDocument(documentID)
        let data = try await body(
            request,
            limit: BodyLimit(
                bytes: configuration.clientLimits.maxAttachmentSize, option: "--max-client-attachment-size"))
        guard !data.isEmpty else { throw APIError.badRequest("The attachment is empty.") }
        let actual = try await LargeWork.run(bytes: data.count) { Attachment.key(for: data) }
        guard actual == expected else {
            throw APIError.unprocessable(
                "The body's SHA-256 is \(actual), not \(expected): the path must name the attachment by the hash of its bytes."
            )
        }
        try await storage.putAttachment(
            documentID: documentID, StoredAttachment(sha256: actual, contentType: contentType, data: data))
        return Self.data([
            "id": .string(actual), "contentType": .string(contentType), "byteSize": .integer(Int64(data.count)),
        ])
    }

    /// `GET /i/d/{documentID}[/l/{layer}]/attachments/{sha256}`: an attachment's bytes for a client
    /// (needs `read-document`).
    func clientDownloadAttachment(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        _ = try context.clientToken(allowing: ["read-document"])
        return try await downloadAttachment(request, context)
    }
}
