import Foundation
import Hummingbird
import InstantJSON
import InstantPDF

extension InstantAPI {
    /// `GET /api/documents/{id}[/layers/{name}]/document_info`: the page count, each page's size,
    /// rotation, label and boxes, the title, the information dictionary, what the file's encryption
    /// permits and whether it has XFA.
    func documentInfo(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let document = try await requireDocument(try documentID(context))
        try await requireLayer(documentID: document.id, name: try layerName(context))
        let source = try await sourcePDF(of: document)
        let (limits, password) = (configuration.pdfProcessing.limits, Self.pdfPassword(request))
        let info = try await pdfWork.perform { () throws -> JSONValue in
            let pdf = try Self.openPDF(source, of: document, password: password, limits: limits)
            return Self.documentInfoJSON(document, pdf: pdf)
        }
        return Self.data(info)
    }

    /// `GET /api/documents/{id}/outline.json`: the PDF's outline, items with their children.
    func documentOutline(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let document = try await requireDocument(try documentID(context))
        let source = try await sourcePDF(of: document)
        let (limits, password) = (configuration.pdfProcessing.limits, Self.pdfPassword(request))
        let outline = try await pdfWork.perform { () throws -> JSONValue in
            let pdf = try Self.openPDF(source, of: document, password: password, limits: limits)
            return .array(pdf.outline().map(Self.outlineJSON))
        }
        return Self.data(["outline": outline])
    }

    /// `DELETE /api/documents?title=&document_id=&start_date=&end_date=`: every document that
    /// matches all the given filters (at least one is needed), deleted one by one.
    func deleteDocuments(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let parameters = request.uri.queryParameters
        func date(_ name: Substring) throws -> Date? {
            guard let text = parameters[name].map(String.init) else { return nil }
            guard let iso = InstantDate.parse(text) else {
                throw APIError(
                    .badRequest,
                    "\(name) must be an ISO 8601 date and time such as 2026-05-13T17:00:00Z, not '\(text)'.",
                    code: "invalid_\(name)")
            }
            return iso
        }
        let documentID = parameters["document_id"].map(String.init)
        let title = parameters["title"].map(String.init)
        let (start, end) = (try date("start_date"), try date("end_date"))
        guard documentID != nil || title != nil || start != nil || end != nil else {
            throw APIError(
                .badRequest,
                "Give at least one filter (title, document_id, start_date, end_date): deleting every document at once is not allowed.",
                code: "missing_filter_parameters")
        }
        var matched: [StoredDocument] = []
        if let documentID {
            if let document = try await storage.document(id: documentID) { matched = [document] }
        } else {
            var query = DocumentQuery()
            query.titleFilter = title
            query.limit = 1_000
            while true {
                let listing = try await storage.listDocuments(query)
                matched += listing.documents
                query.offset += listing.documents.count
                if listing.documents.isEmpty || query.offset >= listing.totalCount { break }
            }
        }
        matched = matched.filter { document in
            (title.map { document.title?.localizedCaseInsensitiveContains($0) == true } ?? true)
                && (start.map { document.createdAt >= $0 } ?? true) && (end.map { document.createdAt <= $0 } ?? true)
        }
        var deleted = 0
        for document in matched where try await storage.deleteDocument(id: document.id) {
            deleted += 1
        }
        context.logger.info("Documents deleted", metadata: ["matched": "\(matched.count)", "deleted": "\(deleted)"])
        return Self.respond([
            "deleted_count": .integer(Int64(deleted)),
            "skipped_count": .integer(Int64(matched.count - deleted)),
            "total_matched": .integer(Int64(matched.count)),
        ])
    }

    // MARK: - JSON

    static func documentInfoJSON(_ document: StoredDocument, pdf: PDFDocument) -> JSONValue {
        let labels = pdf.pageLabels
        let pages: [JSONValue] = pdf.pages.map { page in
            let stored = page.index < document.pages.count ? document.pages[page.index] : nil
            var boxes: JSONObject = ["mediaBox": box(page.mediaBox), "cropBox": box(page.cropBox)]
            for (key, name) in [("BleedBox", "bleedBox"), ("TrimBox", "trimBox"), ("ArtBox", "artBox")] {
                if let rect = pdf.box(key, of: page) { boxes[name] = box(rect) }
            }
            return [
                "pageIndex": .integer(Int64(page.index)),
                "width": .number(stored?.width ?? page.cropBox.width),
                "height": .number(stored?.height ?? page.cropBox.height),
                "rotation": .integer(Int64(page.rotation)),
                "pageLabel": .string(labels[page.index]),
                "rawPdfBoxes": .object(boxes),
            ]
        }
        let metadata = pdf.metadata
        var metadataJSON: JSONObject = [:]
        for (key, value) in [
            ("title", metadata.title), ("author", metadata.author), ("subject", metadata.subject),
            ("keywords", metadata.keywords), ("creator", metadata.creator), ("producer", metadata.producer),
            ("dateCreated", metadata.created), ("dateModified", metadata.modified),
        ] {
            if let value { metadataJSON[key] = .string(value) }
        }
        let permissions = pdf.permissions
        return [
            "pageCount": .integer(Int64(pdf.pageCount)),
            "pages": .array(pages),
            "title": .optional(document.title),
            "metadata": .object(metadataJSON),
            "permissions": [
                "annotationAndForms": .bool(permissions.annotationsAndForms),
                "assemble": .bool(permissions.assemble),
                "extract": .bool(permissions.extract),
                "extractAccessibility": .bool(permissions.extractForAccessibility),
                "fillForms": .bool(permissions.fillForms),
                "modification": .bool(permissions.modify),
                "print": .bool(permissions.print),
                "printHighQuality": .bool(permissions.printHighQuality),
            ],
            "hasXFA": .bool(pdf.hasXFA),
        ]
    }

    /// A PDF box as `[left, bottom, right, top]`, as the file writes it.
    private static func box(_ rect: PDFRect) -> JSONValue {
        .array([rect.minX, rect.minY, rect.maxX, rect.maxY].map(JSONValue.number))
    }

    static func outlineJSON(_ item: PDFOutlineItem) -> JSONValue {
        var json: JSONObject = [
            "type": "pspdfkit/outline-element",
            "title": .string(item.title),
            "isExpanded": .bool(item.isExpanded),
            "isBold": .bool(item.isBold),
            "isItalic": .bool(item.isItalic),
            "children": .array(item.children.map(outlineJSON)),
        ]
        if let action = item.action { json["action"] = action.jsonValue }
        if let color = item.color { json["color"] = .string(color.hex) }
        return .object(json)
    }

    /// The `pspdfkit-pdf-password` header: plain, or `base64:` followed by the base64 of the password.
    static func pdfPassword(_ request: Request) -> String? {
        guard let value = request.headers.first(where: { $0.name.canonicalName == "pspdfkit-pdf-password" })?.value
        else { return nil }
        if value.hasPrefix("base64:"), let data = Data(base64Encoded: String(value.dropFirst(7))) {
            return String(decoding: data, as: UTF8.self)
        }
        return value
    }
}
