import Foundation
import Hummingbird
import InstantJSON
import InstantPDF

extension InstantAPI {
    /// The media type of XFDF.
    static let xfdfContentType = "application/vnd.adobe.xfdf"

    /// `GET /api/documents/{id}[/layers/{name}]/document.xfdf`: the layer's annotations, comments
    /// and form field values as XFDF, in the coordinates of the document's PDF.
    func exportXFDF(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let document = try await requireDocument(try documentID(context))
        let layer = try layerName(context)
        try await requireLayer(documentID: document.id, name: layer)
        let json = try await documentJSON(document, layer: layer).json
        let source = try await sourcePDF(of: document)
        let name = Self.downloadName(document)
        let limits = configuration.pdfProcessing.limits
        let xfdf = try await pdfWork.perform { () throws -> Data in
            // Lenient, as for the PDF export: a stored record that today's rules refuse is left out.
            let records = try InstantDocumentJSON.decode(json, mode: .lenient).document
            return try Self.openPDF(source, of: document, limits: limits).xfdf(records, fileName: "\(name).pdf")
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: Self.xfdfContentType,
                .contentDisposition: "attachment; filename=\"\(name).xfdf\"",
            ],
            body: .init(byteBuffer: ByteBuffer(bytes: xfdf)))
    }

    /// `POST /api/documents/{id}[/layers/{name}]/apply_xfdf`: the XFDF (the body, or a multipart
    /// `file` or `attachment` part) applied to the layer: records with the same ids are replaced,
    /// others are added. Answers the new revision and the elements that were skipped.
    func applyXFDF(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let document = try await requireDocument(try documentID(context))
        let layer = try layerName(context)
        try await requireLayer(documentID: document.id, name: layer)
        let body = try await body(request)
        var payload = body
        if let boundary = MultipartForm.boundary(contentType: request.headers[.contentType] ?? "") {
            let form = try MultipartForm.parse(body, boundary: boundary)
            guard let part = form.part(named: "file") ?? form.part(named: "attachment") else {
                throw APIError.badRequest("The multipart body has no 'file' part with the XFDF.")
            }
            payload = part.data
        }
        let source = try await sourcePDF(of: document)
        let existing = try await storage.records(documentID: document.id, layer: layer, kind: nil).map {
            (id: $0.id, pdfObjectID: $0.pdfObjectID, content: $0.content)
        }
        let (plan, skipped) = try await xfdfImport(
            payload, pdf: source, of: document, matching: existing, replacing: [])
        let result = try await plan.apply(to: storage, documentID: document.id, layer: layer)
        return Self.data([
            "revision": .integer(result.revision),
            "skipped": .array(skipped.map(JSONValue.string)),
        ])
    }

    /// An XFDF file read against a document's PDF, as a validated import. Its annotations take the
    /// ids of the `existing` records they name (see ``matchNames(_:existing:)``);
    /// `replacing` lists records the import deletes unless it writes them (the originals an upload's
    /// XFDF replaces).
    func xfdfImport(
        _ xfdf: Data, pdf: Data, of document: StoredDocument,
        matching existing: [(id: String, pdfObjectID: Int?, content: Data)], replacing: [String]
    ) async throws -> (InstantJSONImport, skipped: [String]) {
        guard !xfdf.isEmpty else { throw APIError.badRequest("The XFDF is empty.") }
        let (limits, identifiers) = (configuration.pdfProcessing.limits, identifiers)
        let read = try await pdfWork.perform { () throws -> XFDFImport in
            let pdfDocument = try Self.openPDF(pdf, of: document, limits: limits)
            do throws(XFDFError) {
                return try pdfDocument.xfdfRecords(xfdf, identifiers: identifiers)
            } catch {
                throw APIError.unprocessable("The XFDF was refused: \(error). Fix that element and send it again.")
            }
        }
        var plan = try await LargeWork.run(bytes: xfdf.count) {
            var records = read.records
            Self.matchNames(&records, existing: existing)
            return try InstantJSONImport(
                data: records.serialized(), pageCount: document.pageCount, lenient: false, identifiers: identifiers)
        }
        plan.replacedIDs = replacing
        return (plan, read.skipped)
    }

    /// Gives each imported annotation and comment the id (and PDF object) of the existing record
    /// its XFDF `name` names, by id or by the record's own `name`: an XFDF exported, edited in
    /// another tool (which keeps names) and applied again updates the records it came from instead
    /// of adding copies. Comments follow their root.
    static func matchNames(
        _ records: inout InstantDocumentJSON, existing: [(id: String, pdfObjectID: Int?, content: Data)]
    ) {
        var byID: [String: Int?] = [:]
        var byName: [String: (id: String, pdfObjectID: Int?)] = [:]
        for record in existing {
            byID[record.id] = record.pdfObjectID
            if let name = (try? JSONValue.parse(record.content))?["name"]?.stringValue, byName[name] == nil {
                byName[name] = (record.id, record.pdfObjectID)
            }
        }
        var renamed: [String: String] = [:]
        for index in records.annotations.indices {
            let annotation = records.annotations[index]
            guard let id = annotation.id else { continue }
            if let pdfObjectID = byID[id] {
                records.annotations[index].pdfObjectId = pdfObjectID
            } else if let match = annotation.name.flatMap({ byName[$0] }) {
                renamed[id] = match.id
                records.annotations[index].id = match.id
                records.annotations[index].pdfObjectId = match.pdfObjectID
            }
        }
        for index in records.comments.indices {
            if let root = renamed[records.comments[index].rootId] {
                records.comments[index].json["rootId"] = .string(root)
            }
            if let id = records.comments[index].id, let pdfObjectID = byID[id] {
                records.comments[index].pdfObjectId = pdfObjectID
            }
        }
    }

    /// The uploaded PDF of a document, whole.
    func sourcePDF(of document: StoredDocument) async throws -> Data {
        guard let source = try await storage.pdf(sha256: document.sourcePDFSHA256) else {
            throw APIError(.internalServerError, "The PDF file of document '\(document.id)' is missing from storage.")
        }
        return source
    }

    /// The PDF of a stored document, opened with the server's limits.
    static func openPDF(
        _ data: Data, of document: StoredDocument, password: String? = nil, limits: PDFLimits
    ) throws -> PDFDocument {
        do throws(PDFError) {
            return try PDFDocument(data: data, password: password, limits: limits)
        } catch  where error.code == .limitExceeded {
            throw APIError.unprocessable(
                "The PDF of document '\(document.id)' could not be read: \(PDFLimitRefusal.reason(error))")
        } catch {
            throw APIError.unprocessable("The PDF of document '\(document.id)' could not be read: \(error)")
        }
    }

    /// The name of a document's downloads: its title, or its id.
    static func downloadName(_ document: StoredDocument) -> String {
        (document.title?.isEmpty == false ? document.title! : document.id).replacingOccurrences(of: "\"", with: "'")
    }
}
