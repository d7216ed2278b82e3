import Foundation
import Hummingbird
import InstantJSON

extension InstantAPI {
    // MARK: Form field values

    /// `GET .../form-field-values`: `{"data": {"formFieldValues": [...]}}`.
    func listFormFieldValues(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let (id, layer, _) = try await documentAndLayer(context)
        let records = try await storage.records(documentID: id, layer: layer, kind: .formFieldValue)
        // Each value with who created and last changed it and its group, as the existing server's
        // `FormFieldValueRecord` has them.
        let values = records.compactMap { record -> JSONValue? in
            guard var value = (try? JSONValue.parse(record.content))?.objectValue else { return nil }
            value["createdBy"] = .optional(record.createdBy)
            value["updatedBy"] = .optional(record.updatedBy)
            value["group"] = .optional(record.group)
            return .object(value)
        }
        return Self.data(["formFieldValues": .array(values)])
    }

    /// `POST .../form-field-values` with `{"formFieldValues": [{"name": ..., "value": ...}]}`: sets
    /// the values in one transaction.
    func setFormFieldValues(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let (id, layer, document) = try await documentAndLayer(context)
        let body = try await jsonBody(request)
        guard let items = body["formFieldValues"]?.arrayValue, !items.isEmpty else {
            throw APIError.badRequest("The body needs 'formFieldValues': an array of {name, value} objects.")
        }
        var writes: [RecordWrite] = []
        for (index, item) in items.enumerated() {
            guard var object = item.objectValue else {
                throw APIError.badRequest("formFieldValues[\(index)]: expected an object")
            }
            guard object["value"] != nil else {
                throw APIError.unprocessable("formFieldValues[\(index)].value: missing (use null to clear)")
            }
            object["v"] = object["v"] ?? 1
            object["type"] = object["type"] ?? "pspdfkit/form-field-value"
            let content = JSONValue.object(object)
            let path = "formFieldValues[\(index)]"
            if let problem = RecordValidation.problem(
                kind: .formFieldValue,
                content: content,
                pageCount: document.pageCount,
                path: path
            ) {
                throw APIError.unprocessable(problem)
            }
            writes.append(
                InstantJSONImport.write(
                    kind: .formFieldValue, content: content, user: nil, group: nil, identifiers: identifiers)
            )
        }
        let result = try await storage.apply(
            writes.map { .put($0) },
            documentID: id,
            layer: layer,
            onConditionFailure: .abortBatch
        )
        return Self.data(["formFieldValues": .array(result.applied.compactMap { try? JSONValue.parse($0.content) })])
    }

    // MARK: Bookmarks

    /// `GET .../bookmarks`: `{"data": {"bookmarks": [records]}}`.
    func listBookmarks(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let (id, layer, _) = try await documentAndLayer(context)
        let records = try await storage.records(documentID: id, layer: layer, kind: .bookmark)
        return Self.data(["bookmarks": .array(records.map(Self.recordJSON))])
    }

    /// `POST .../bookmarks` with `{id?, content}`.
    func createBookmark(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        try await writeBookmark(request, context, recordID: nil)
    }

    /// `PUT .../bookmarks/{bookmarkID}` with `{content}`.
    func updateBookmark(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        try await writeBookmark(request, context, recordID: try identifier("bookmarkID", context, what: "bookmark id"))
    }

    /// `DELETE .../bookmarks/{bookmarkID}`.
    func deleteBookmark(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let (id, layer, _) = try await documentAndLayer(context)
        let recordID = try identifier("bookmarkID", context, what: "bookmark id")
        _ = try await storage.apply(
            [.delete(id: recordID, condition: .exists)],
            documentID: id,
            layer: layer,
            onConditionFailure: .abortBatch
        )
        return Self.data([:])
    }

    private func writeBookmark(
        _ request: Request,
        _ context: InstantRequestContext,
        recordID: String?
    ) async throws -> Response {
        let (id, layer, document) = try await documentAndLayer(context)
        let body = try await jsonBody(request)
        guard let content = body["content"] else { throw APIError.unprocessable("content: missing") }
        if let problem = RecordValidation.problem(
            kind: .bookmark, content: content, pageCount: document.pageCount, path: "content")
        {
            throw APIError.unprocessable(problem)
        }
        let explicitID = recordID ?? body["id"]?.stringValue
        if let explicitID { try Identifiers.validate(explicitID, what: "bookmark id") }
        let write = InstantJSONImport.write(
            kind: .bookmark,
            content: content,
            user: body["user_id"]?.stringValue,
            group: nil,
            identifiers: identifiers,
            id: explicitID
        )
        let result = try await storage.apply(
            [.put(write, condition: recordID == nil ? .absent : .exists)],
            documentID: id,
            layer: layer,
            onConditionFailure: .abortBatch
        )
        return Self.data(result.applied.first.map(Self.recordJSON) ?? [:])
    }

    // MARK: Comments

    /// `GET .../annotations/{annotationID}/comments`: the comments of the thread rooted at the annotation.
    func listComments(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let (id, layer, _) = try await documentAndLayer(context)
        let rootID = try identifier("annotationID", context, what: "annotation id")
        _ = try await requireAnnotation(documentID: id, layer: layer, id: rootID)
        let comments = try await storage.records(documentID: id, layer: layer, kind: .comment).filter {
            (try? JSONValue.parse($0.content))?["rootId"]?.stringValue == rootID
        }
        return Self.data(["comments": .array(comments.map(Self.recordJSON))])
    }

    /// `POST .../annotations/{annotationID}/comments` with `{"comments": [{content: {text}, id?, user_id?, group?}]}`.
    func createComments(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let (id, layer, document) = try await documentAndLayer(context)
        let rootID = try identifier("annotationID", context, what: "annotation id")
        let root = try await requireAnnotation(documentID: id, layer: layer, id: rootID)
        let pageIndex = (try? JSONValue.parse(root.content))?["pageIndex"] ?? 0
        let body = try await jsonBody(request)
        let writes = try commentWrites(body["comments"], rootID: rootID, pageIndex: pageIndex, document: document)
        let result = try await storage.apply(
            writes.map { .put($0, condition: .absent) },
            documentID: id,
            layer: layer,
            onConditionFailure: .abortBatch
        )
        return Self.data(["comments": .array(result.applied.map(Self.recordJSON))])
    }

    /// `POST .../comments` with `{"annotation": {content, id?, user_id?, group?}, "comments": [...]}`:
    /// a new thread, its root annotation and its comments in one commit.
    func createThread(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let (id, layer, document) = try await documentAndLayer(context)
        let body = try await jsonBody(request)
        guard let annotation = body["annotation"], annotation.objectValue != nil else {
            throw APIError.badRequest(
                "The body needs 'annotation': the thread's root {content, id?, user_id?, group?}.")
        }
        var root = try annotationWrite(annotation, document: document, path: "annotation", requireID: false)
        var content = (try? JSONValue.parse(root.content))?.objectValue ?? [:]
        content["isCommentThreadRoot"] = true
        root.content = JSONValue.object(content).encoded()
        let comments = try commentWrites(
            body["comments"], rootID: root.id, pageIndex: content["pageIndex"] ?? 0, document: document)
        _ = try await storage.apply(
            ([root] + comments).map { .put($0, condition: .absent) },
            documentID: id,
            layer: layer,
            onConditionFailure: .abortBatch
        )
        return Self.data([
            "annotation": ["id": .string(root.id)],
            "comments": .array(comments.map { ["id": .string($0.id)] }),
        ])
    }

    /// The writes of new comments of the thread rooted at `rootID`, from `[{content: {text}, id?,
    /// user_id?, group?}]`: each on the root's page, with its creation and update times.
    private func commentWrites(
        _ items: JSONValue?, rootID: String, pageIndex: JSONValue, document: StoredDocument
    ) throws -> [RecordWrite] {
        guard let items = items?.arrayValue, !items.isEmpty else {
            throw APIError.badRequest("The body needs 'comments': an array of {content: {text}} objects.")
        }
        let now = JSONValue.string(Self.timestamp(Date()))
        var writes: [RecordWrite] = []
        for (index, item) in items.enumerated() {
            let path = "comments[\(index)]"
            guard var content = item["content"]?.objectValue else {
                throw APIError.unprocessable("\(path).content: expected an object")
            }
            guard content["text"] != nil else { throw APIError.unprocessable("\(path).content.text: missing") }
            content["v"] = content["v"] ?? 2
            content["type"] = "pspdfkit/comment"
            content["rootId"] = .string(rootID)
            content["pageIndex"] = pageIndex
            content["createdAt"] = content["createdAt"] ?? now
            content["updatedAt"] = content["updatedAt"] ?? now
            if let problem = RecordValidation.problem(
                kind: .comment,
                content: .object(content),
                pageCount: document.pageCount,
                path: "\(path).content"
            ) {
                throw APIError.unprocessable(problem)
            }
            let explicitID = item["id"]?.stringValue
            if let explicitID { try Identifiers.validate(explicitID, what: "comment id") }
            writes.append(
                InstantJSONImport.write(
                    kind: .comment,
                    content: .object(content),
                    user: item["user_id"]?.stringValue,
                    group: item["group"]?.stringValue,
                    identifiers: identifiers,
                    id: explicitID
                )
            )
        }
        return writes
    }

    // MARK: Attachments

    /// `POST .../attachments`: stores the body (with its `Content-Type`) under its SHA-256.
    func uploadAttachment(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let id = try documentID(context)
        _ = try await requireDocument(id)
        let contentType = try AttachmentContentType.declared(by: request)
        let data = try await body(request)
        guard !data.isEmpty else { throw APIError.badRequest("The attachment is empty.") }
        let sha = try await storage.putAttachment(documentID: id, data: data, contentType: contentType)
        return Self.data([
            "id": .string(sha), "contentType": .string(contentType), "byteSize": .integer(Int64(data.count)),
        ])
    }

    /// `GET .../attachments/{attachmentID}`: the bytes, with their content type and an ETag; only
    /// images are shown inline (see ``AttachmentContentType``).
    func downloadAttachment(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let id = try documentID(context)
        let attachmentID = try identifier("attachmentID", context, what: "attachment id")
        _ = try await requireDocument(id)
        guard let attachment = try await storage.attachmentContent(documentID: id, sha256: attachmentID.lowercased())
        else {
            throw APIError.notFound("The document '\(id)' has no attachment '\(attachmentID)'.")
        }
        let served = AttachmentContentType.served(stored: attachment.contentType, id: attachment.sha256)
        // Sent part by part as it is read, never loaded whole.
        return try ByteRangeResponse.make(
            ByteRangeResponse.Content(length: attachment.byteSize, read: attachment.read),
            contentType: served.contentType,
            disposition: served.disposition,
            etag: "\"\(attachment.sha256)\"",
            request: request
        )
    }

    // MARK: Helpers

    /// The document and layer of the path, both required to exist.
    func documentAndLayer(_ context: InstantRequestContext) async throws -> (String, String, StoredDocument) {
        let id = try documentID(context)
        let layer = try layerName(context)
        let document = try await requireDocument(id)
        try await requireLayer(documentID: id, name: layer)
        return (id, layer, document)
    }

    func requireAnnotation(documentID: String, layer: String, id: String) async throws -> StoredRecord {
        guard let record = try await storage.record(documentID: documentID, layer: layer, id: id), !record.isDeleted,
            record.kind == .annotation
        else { throw APIError.notFound("No annotation has the id '\(id)' on this layer.") }
        return record
    }
}
