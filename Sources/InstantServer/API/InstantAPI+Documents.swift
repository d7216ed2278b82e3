import Foundation
import Hummingbird
import InstantJSON
import InstantPDF

extension InstantAPI {
    /// `POST /api/documents`: a raw PDF body, or `multipart/form-data` with `file`, optional
    /// `document_id`, `title`, and `instant.json` or `attachment` (Instant JSON or XFDF, applied to
    /// the default layer; an XFDF replaces the PDF's own annotations unless
    /// `keep_current_annotations` is `true`).
    func createDocument(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let contentType = request.headers[.contentType] ?? "application/pdf"
        let body = try await body(request)
        var pdf = body
        var requestedID: String?
        var title: String?
        var filename: String?
        var instantJSON: Data?
        var xfdf: Data?
        var keepCurrentAnnotations = false
        if let boundary = MultipartForm.boundary(contentType: contentType) {
            let form = try MultipartForm.parse(body, boundary: boundary)
            let file = form.part(named: "file")
            guard file != nil || form.text(named: "url") != nil else {
                throw APIError.badRequest(
                    "The multipart upload has no 'file' part with the PDF (nor a 'url' to fetch it from).")
            }
            pdf = file?.data ?? Data()
            requestedID = form.text(named: "document_id")
            title = form.text(named: "title")
            filename = file?.filename
            instantJSON = form.part(named: "instant.json")?.data
            if let attachment = form.part(named: "attachment")?.data {
                guard instantJSON == nil else {
                    throw APIError.badRequest("Send the annotations as 'instant.json' or as 'attachment', not both.")
                }
                if XFDFImport.isXML(attachment) {
                    xfdf = attachment
                } else {
                    instantJSON = attachment
                }
            }
            keepCurrentAnnotations =
                try Self.flag(
                    form.text(named: "keep_current_annotations").map { Substring($0) },
                    name: "keep_current_annotations") ?? false
            if pdf.isEmpty, let url = form.text(named: "url") { pdf = try await download.fetch(url) }
        } else if contentType.lowercased().hasPrefix("application/json") {
            // `{"url": ..., "document_id"?, "title"?, "keep_current_annotations"?}`: the PDF is
            // fetched from the URL.
            guard let fields = (try? JSONValue.parse(body))?.objectValue, let url = fields["url"]?.stringValue else {
                throw APIError.badRequest(
                    "A JSON body adds a document from a URL: {\"url\": \"https://…\", \"document_id\"?, \"title\"?}.")
            }
            requestedID = fields["document_id"]?.stringValue
            title = fields["title"]?.stringValue
            filename = URL(string: url)?.lastPathComponent
            keepCurrentAnnotations = fields["keep_current_annotations"]?.boolValue ?? false
            pdf = try await download.fetch(url)
        }
        guard !pdf.isEmpty else { throw APIError.badRequest("The upload is empty; send the PDF's bytes.") }
        let documentID = try newDocumentID(requestedID)
        let password = Self.pdfPassword(request)
        let imported: ImportedDocument
        let sha256: String
        do {
            let (importer, limits) = (importer, configuration.pdfProcessing.limits)
            (imported, sha256) = try await pdfWork.perform { [pdf] in
                (try importer.importDocument(pdf, password: password, limits: limits), Attachment.key(for: pdf))
            }
        } catch let error as DocumentImportError where error.code == .limitExceeded {
            throw APIError.unprocessable("The PDF was refused: \(error.message)")
        } catch let error as DocumentImportError {
            throw APIError.unprocessable("The file is not a readable PDF: \(error.message)")
        }
        // Validate the Instant JSON before anything is stored.
        var importPlan: InstantJSONImport?
        if let instantJSON {
            let pageCount = imported.pages.count
            importPlan = try await LargeWork.run(bytes: instantJSON.count) { [identifiers] in
                try InstantJSONImport(
                    data: instantJSON, pageCount: pageCount, lenient: false, identifiers: identifiers)
            }
        }
        let document = StoredDocument(
            id: documentID,
            title: title ?? imported.title ?? filename,
            sourcePDFSHA256: sha256,
            byteSize: pdf.count,
            pages: imported.pages,
            pdfID: imported.pdfID,
            isPasswordProtected: imported.isPasswordProtected,
            createdAt: Date()
        )
        if let xfdf {
            // The PDF's own annotations and comments give way to the XFDF's, unless asked to stay.
            let replaced =
                keepCurrentAnnotations
                ? []
                : imported.baseRecords.filter { record in
                    record.kind == .comment
                        || (record.kind == .annotation
                            && (try? JSONValue.parse(record.content))?["type"]?.stringValue != "pspdfkit/widget")
                }.map(\.id)
            let originals = imported.baseRecords.map { (id: $0.id, pdfObjectID: $0.pdfObjectID, content: $0.content) }
            importPlan = try await xfdfImport(
                xfdf, pdf: pdf, of: document, matching: originals, replacing: replaced
            ).0
        }
        // One transaction: the document, its base records and the applied Instant JSON or XFDF.
        try await storage.createDocument(
            document,
            pdf: pdf,
            baseRecords: imported.baseRecords,
            initialChanges: importPlan?.changes(existing: imported.baseRecords.map { ($0.id, $0.pdfObjectID) }) ?? [],
            attachments: importPlan?.attachments ?? []
        )
        context.logger.info("Document created", metadata: ["document_id": "\(documentID)", "bytes": "\(pdf.count)"])
        return Self.data([
            "document_id": .string(documentID),
            "errors": [],
            "password_protected": .bool(document.isPasswordProtected),
            "sourcePdfSha256": .string(document.sourcePDFSHA256),
            "title": .optional(document.title),
            "createdAt": .string(Self.timestamp(document.createdAt)),
        ])
    }

    /// `GET /api/documents`: `page_size`, `cursor` (an opaque offset), `title`, `order_by`,
    /// `order_direction`, `count_remaining`.
    func listDocuments(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        var query = DocumentQuery()
        let parameters = request.uri.queryParameters
        if let size = parameters["page_size"] {
            guard let value = Int(size), (1...1000).contains(value) else {
                throw APIError.badRequest("page_size must be an integer from 1 to 1000, not '\(size)'.")
            }
            query.limit = value
        }
        if let cursor = parameters["cursor"] {
            guard let data = Data(base64Encoded: String(cursor)),
                let offset = Int(String(decoding: data, as: UTF8.self)),
                offset >= 0
            else { throw APIError.badRequest("The cursor '\(cursor)' is not one this server returned.") }
            query.offset = offset
        }
        if let title = parameters["title"] { query.titleFilter = String(title) }
        if let order = parameters["order_by"] {
            guard let value = DocumentQuery.Order(rawValue: String(order)) else {
                throw APIError.badRequest("order_by must be 'title' or 'created_at', not '\(order)'.")
            }
            query.order = value
        }
        if let direction = parameters["order_direction"] {
            guard direction == "asc" || direction == "desc" else {
                throw APIError.badRequest("order_direction must be 'asc' or 'desc', not '\(direction)'.")
            }
            query.ascending = direction == "asc"
        }
        let listing = try await storage.listDocuments(query)
        let nextOffset = query.offset + listing.documents.count
        let next: JSONValue =
            nextOffset < listing.totalCount ? .string(Data(String(nextOffset).utf8).base64EncodedString()) : .null
        let previous: JSONValue =
            query.offset > 0
            ? .string(Data(String(max(0, query.offset - query.limit)).utf8).base64EncodedString()) : .null
        var answer: JSONObject = [
            "data": .array(listing.documents.map { Self.propertiesJSON($0, includeID: true) }),
            "document_count": .integer(Int64(listing.totalCount)),
            "next_cursor": next,
            "prev_cursor": previous,
        ]
        if parameters["count_remaining"] == "true" {
            answer["prev_document_count"] = .integer(Int64(min(query.offset, listing.totalCount)))
            answer["next_document_count"] = .integer(Int64(max(0, listing.totalCount - nextOffset)))
        }
        return Self.respond(.object(answer))
    }

    /// `GET /api/documents/{id}` and `.../properties`.
    func documentProperties(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let document = try await requireDocument(try documentID(context))
        return Self.data(Self.propertiesJSON(document, includeID: true))
    }

    /// `DELETE /api/documents/{id}`.
    func deleteDocument(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let id = try documentID(context)
        guard try await storage.deleteDocument(id: id) else {
            throw APIError.notFound("No document has the id '\(id)'.")
        }
        return Self.data([:])
    }

    /// The uploaded PDF with `ETag`, `If-None-Match` and single `Range` support, read from the blob
    /// store part by part as it is sent.
    func pdfResponse(_ document: StoredDocument, request: Request) async throws -> Response {
        let sha256 = document.sourcePDFSHA256
        let pdfs = storage.pdfs
        guard let size = try await pdfs.size(sha256: sha256) else {
            throw APIError(
                .internalServerError,
                "The PDF file of document '\(document.id)' is missing from storage."
            )
        }
        return try ByteRangeResponse.make(
            ByteRangeResponse.Content(length: size) { range in try await pdfs.read(sha256: sha256, range: range) },
            contentType: "application/pdf",
            etag: "\"\(document.sourcePDFSHA256)\"",
            request: request
        )
    }

    static func propertiesJSON(_ document: StoredDocument, includeID: Bool) -> JSONValue {
        var object: JSONObject = [
            "passwordProtected": .bool(document.isPasswordProtected),
            "sourcePdfSha256": .string(document.sourcePDFSHA256),
            "title": .optional(document.title),
            "byteSize": .integer(Int64(document.byteSize)),
            "createdAt": .string(timestamp(document.createdAt)),
            "storage": ["type": "built-in"],
            "pageCount": .integer(Int64(document.pageCount)),
        ]
        if includeID { object["id"] = .string(document.id) }
        if let pdfID = document.pdfID {
            object["pdfId"] = ["permanent": .string(pdfID.permanent), "changing": .string(pdfID.changing)]
        }
        return .object(object)
    }
}
