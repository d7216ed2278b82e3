import Foundation
import Hummingbird
import InstantJSON
import InstantPDF

extension InstantAPI {
    /// `GET /api/documents/{id}[/layers/{name}]/pdf`: the PDF with the layer's records written
    /// into it (`?flatten`, `?annotations`, `?comments`), or the uploaded file with `?source=true`.
    func documentPDF(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let document = try await requireDocument(try documentID(context))
        let layer = try layerName(context)
        try await requireLayer(documentID: document.id, name: layer)
        let query = request.uri.queryParameters
        let source = try Self.flag(query["source"], name: "source") ?? false
        let options = try Self.exportOptions(request)
        if source {
            guard !options.flatten else {
                throw APIError.badRequest(
                    "'source' and 'flatten' cannot be used together: the source is the PDF as it was uploaded.")
            }
            return try await pdfResponse(document, request: request)
        }
        return try await exportedPDF(document, layer: layer, options: options)
    }

    /// `POST /api/documents/{id}[/layers/{name}]/pdf_with_instant_json`: the layer's records with an
    /// uploaded Instant JSON applied on top (multipart `instant.json` part or a JSON body), written
    /// into the PDF. The layer itself does not change.
    func documentPDFWithInstantJSON(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let document = try await requireDocument(try documentID(context))
        let layer = try layerName(context)
        try await requireLayer(documentID: document.id, name: layer)
        let body = try await body(request)
        return try await exportedPDF(
            document, layer: layer, options: try Self.exportOptions(request),
            applying: (body, request.headers[.contentType]))
    }

    /// `GET /i/d/{documentID}[/l/{layer}]/document.pdf`: the layer's PDF with its records, for a
    /// client whose token has the `download` permission (same options as the API's export).
    func clientExportedPDF(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let token = try context.clientToken(allowing: ["download"])
        let (documentID, layer) = (token.documentID, token.layer)
        let document = try await requireDocument(documentID)
        try await requireLayer(documentID: documentID, name: layer)
        return try await exportedPDF(document, layer: layer, options: try Self.exportOptions(request))
    }

    // MARK: - Helpers

    /// The PDF of a layer with its records written in, and with an uploaded Instant JSON (body and
    /// content type of a `pdf_with_instant_json` request) applied first.
    func exportedPDF(
        _ document: StoredDocument, layer: String, options: PDFExportOptions,
        applying upload: (body: Data, contentType: String?)? = nil
    ) async throws -> Response {
        let json = try await documentJSON(document, layer: layer).json
        let source = try await sourcePDF(of: document)
        // The answer is the stored file followed by the update, without joining them first.
        let limits = configuration.pdfProcessing.limits
        let update = try await pdfWork.perform { () throws -> Data in
            // Stored records were validated when written; lenient decoding keeps an export going if
            // an old record no longer passes today's rules (it is left out of the PDF).
            var records = try InstantDocumentJSON.decode(json, mode: .lenient).document
            if let upload {
                try Self.apply(
                    upload.body, contentType: upload.contentType, pageCount: document.pageCount, to: &records)
            }
            do throws(PDFError) {
                let pdf = try PDFDocument(data: source, limits: limits)
                return try pdf.incrementalUpdate(
                    records, attachments: records.attachments.mapValues(\.data), options: options)
            } catch let error where error.code == .limitExceeded {
                throw APIError.unprocessable(
                    "The PDF of document '\(document.id)' could not be written: \(PDFLimitRefusal.reason(error))")
            } catch {
                throw APIError.unprocessable("The PDF of document '\(document.id)' could not be written: \(error)")
            }
        }
        let name = Self.downloadName(document)
        return Response(
            status: .ok,
            headers: [
                .contentType: "application/pdf",
                .contentDisposition: "attachment; filename=\"\(name).pdf\"",
            ],
            body: .init(contentsOf: [ByteBuffer(bytes: source), ByteBuffer(bytes: update)]))
    }

    /// `records` with the Instant JSON of a `pdf_with_instant_json` request applied: a multipart
    /// `instant.json` part or the whole body, valid, with annotations only on pages the document has.
    static func apply(_ body: Data, contentType: String?, pageCount: Int, to records: inout InstantDocumentJSON) throws
    {
        var payload = body
        if let boundary = MultipartForm.boundary(contentType: contentType ?? "") {
            guard let part = try MultipartForm.parse(body, boundary: boundary).part(named: "instant.json") else {
                throw APIError.badRequest("The multipart body has no 'instant.json' part.")
            }
            payload = part.data
        }
        let uploaded: InstantDocumentJSON
        do {
            uploaded = try InstantDocumentJSON.decode(payload).document
        } catch {
            throw APIError.unprocessable("The Instant JSON is not valid: \(error)")
        }
        if let annotation = uploaded.annotations.first(where: { $0.pageIndex >= pageCount }) {
            throw APIError.unprocessable(
                "Annotation '\(annotation.id ?? "")' is on page \(annotation.pageIndex); the document has \(pageCount) pages."
            )
        }
        records.apply(uploaded)
    }

    /// `flatten`, `annotations` and `comments` query parameters (`true`/`false`/`1`/`0`).
    static func exportOptions(_ request: Request) throws -> PDFExportOptions {
        let query = request.uri.queryParameters
        return PDFExportOptions(
            flatten: try flag(query["flatten"], name: "flatten") ?? false,
            includeAnnotations: try flag(query["annotations"], name: "annotations") ?? true,
            includeComments: try flag(query["comments"], name: "comments") ?? true)
    }

    static func flag(_ value: Substring?, name: String) throws -> Bool? {
        guard let value else { return nil }
        switch value.lowercased() {
        case "true", "1": return true
        case "false", "0": return false
        default: throw APIError.badRequest("The query parameter '\(name)' must be true or false, not '\(value)'.")
        }
    }
}
