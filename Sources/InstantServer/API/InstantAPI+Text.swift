import Foundation
import Hummingbird
import InstantJSON
import InstantPDF

extension InstantAPI {
    /// The most search results one request answers.
    static let maximumSearchResults = 1_000
    /// The longest search query, in characters.
    static let maximumSearchQueryLength = 1_000

    /// `GET /api/documents/{id}[/layers/{name}]/pages/{pageIndex}/text`: the page's lines of
    /// text, each with its words and their positions.
    func pageText(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let document = try await requireDocument(try documentID(context))
        try await requireLayer(documentID: document.id, name: try layerName(context))
        let pageText = context.parameters.get("pageIndex") ?? ""
        guard let page = Int(pageText), page >= 0, page < document.pageCount else {
            throw APIError.notFound(
                "Parameter 'page_index' is invalid or out of bounds: the document '\(document.id)' has "
                    + "\(document.pageCount) pages, numbered from 0, not '\(pageText)'.")
        }
        let texts = try await pageTexts(of: document, pages: page..<page + 1, request: request)
        return Self.respond(["textLines": .array(texts.first?.lines.map(Self.textLineJSON) ?? [])])
    }

    /// `GET /api/documents/{id}[/layers/{name}]/pages/text`: every page's lines of text.
    func documentText(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let document = try await requireDocument(try documentID(context))
        try await requireLayer(documentID: document.id, name: try layerName(context))
        let texts = try await pageTexts(of: document, pages: 0..<document.pageCount, request: request)
        return Self.respond(
            .array(
                texts.map { text in
                    [
                        "pageIndex": .integer(Int64(text.pageIndex)),
                        "textLines": .array(text.lines.map(Self.textLineJSON)),
                    ]
                }))
    }

    /// `GET /api/documents/{id}/search?q=&type=text|regex|preset&start=&limit=&case_sensitive=`:
    /// where the query matches the text of the pages from `start` to `limit` (both included).
    func searchDocument(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let document = try await requireDocument(try documentID(context))
        let parameters = request.uri.queryParameters
        let expression = try Self.searchExpression(
            query: parameters["q"].map(String.init), type: parameters["type"].map(String.init) ?? "text",
            caseSensitive: try Self.booleanParameter(
                parameters["case_sensitive"].map(String.init), name: "case_sensitive"))
        _ = try Self.booleanParameter(parameters["include_annotations"].map(String.init), name: "include_annotations")
        let start = try Self.pageParameter(parameters["start"].map(String.init), name: "start") ?? 0
        let last = try Self.pageParameter(parameters["limit"].map(String.init), name: "limit") ?? document.pageCount - 1
        let pages = start..<max(start, min(last, document.pageCount - 1) + 1)
        let texts = try await pageTexts(of: document, pages: pages, request: request)
        var results: [JSONValue] = []
        for text in texts where results.count < Self.maximumSearchResults {
            for match in text.matches(of: expression, limit: Self.maximumSearchResults - results.count) {
                results.append([
                    "pageIndex": .integer(Int64(match.pageIndex)),
                    "previewText": .string(match.previewText),
                    "rangeInPreview": [
                        .integer(Int64(match.rangeInPreview.lowerBound)), .integer(Int64(match.rangeInPreview.count)),
                    ],
                    "rectsOnPage": .array(match.rects.map(Self.rectJSON)),
                    "isAnnotation": false,
                ])
            }
        }
        return Self.data(.array(results))
    }

    /// The text of some pages of a stored document, read off the event loops.
    private func pageTexts(of document: StoredDocument, pages: Range<Int>, request: Request) async throws
        -> [PDFPageText]
    {
        let source = try await sourcePDF(of: document)
        let (limits, password) = (configuration.pdfProcessing.limits, Self.pdfPassword(request))
        return try await pdfWork.perform { () throws -> [PDFPageText] in
            let pdf = try Self.openPDF(source, of: document, password: password, limits: limits)
            do throws(PDFError) {
                return try pdf.text(ofPages: pages)
            } catch  where error.code == .limitExceeded {
                throw APIError.unprocessable(
                    "The text of document '\(document.id)' could not be read: \(PDFLimitRefusal.reason(error))")
            } catch {
                throw APIError.unprocessable("The text of document '\(document.id)' could not be read: \(error)")
            }
        }
    }

    /// The expression a search runs: the query as plain text (case-insensitive unless asked,
    /// three characters or more), as a regular expression, or a preset's expression (both
    /// case-sensitive unless asked).
    static func searchExpression(query: String?, type: String, caseSensitive: Bool?) throws -> NSRegularExpression {
        guard let query, !query.isEmpty else {
            throw APIError.badRequest("The search needs a query: give it as 'q'.")
        }
        guard query.count <= maximumSearchQueryLength else {
            throw APIError.badRequest("The query is longer than \(maximumSearchQueryLength) characters.")
        }
        let pattern: String
        var options: NSRegularExpression.Options = []
        switch type {
        case "text":
            guard query.count >= 3 else {
                throw APIError.badRequest("A text search needs at least 3 characters, not '\(query)'.")
            }
            pattern = NSRegularExpression.escapedPattern(for: query)
            if caseSensitive != true { options.insert(.caseInsensitive) }
        case "regex":
            pattern = query
            if caseSensitive == false { options.insert(.caseInsensitive) }
        case "preset":
            guard let preset = SearchPreset(rawValue: query) else {
                throw APIError.badRequest(
                    "'\(query)' is not a search preset; the presets are "
                        + SearchPreset.allCases.map(\.rawValue).joined(separator: ", ") + ".")
            }
            pattern = preset.pattern
            if caseSensitive == false { options.insert(.caseInsensitive) }
        default:
            throw APIError.badRequest("'type' must be text, regex or preset, not '\(type)'.")
        }
        do {
            return try NSRegularExpression(pattern: pattern, options: options)
        } catch {
            throw APIError.badRequest("'\(query)' is not a valid regular expression (ICU syntax).")
        }
    }

    private static func booleanParameter(_ value: String?, name: String) throws -> Bool? {
        switch value {
        case nil: return nil
        case "true": return true
        case "false": return false
        default: throw APIError.badRequest("'\(name)' must be true or false, not '\(value!)'.")
        }
    }

    private static func pageParameter(_ value: String?, name: String) throws -> Int? {
        guard let value else { return nil }
        guard let page = Int(value), page >= 0 else {
            throw APIError.badRequest("'\(name)' must be a page index (0 or more), not '\(value)'.")
        }
        return page
    }

    /// A line as the existing server's `TextLine`, with its words (our addition).
    static func textLineJSON(_ line: PDFTextLine) -> JSONValue {
        var json = boxJSON(line.frame)
        json["contents"] = .string(line.text)
        json["words"] = .array(
            line.words.map { word in
                var json = boxJSON(word.frame)
                json["contents"] = .string(word.text)
                return .object(json)
            })
        return .object(json)
    }

    private static func boxJSON(_ frame: Rect) -> JSONObject {
        [
            "left": .double(frame.left), "top": .double(frame.top), "width": .double(frame.width),
            "height": .double(frame.height),
        ]
    }

    /// A rectangle as `[left, top, width, height]`, the order of every rectangle in Instant JSON.
    private static func rectJSON(_ frame: Rect) -> JSONValue {
        [.double(frame.left), .double(frame.top), .double(frame.width), .double(frame.height)]
    }
}

/// The named patterns of `type=preset` searches.
enum SearchPreset: String, CaseIterable {
    case creditCardNumber = "credit-card-number"
    case date
    case emailAddress = "email-address"
    case internationalPhoneNumber = "international-phone-number"
    case ipv4
    case ipv6
    case macAddress = "mac-address"
    case northAmericanPhoneNumber = "north-american-phone-number"
    case socialSecurityNumber = "social-security-number"
    case time
    case url
    case usZipCode = "us-zip-code"
    case vin

    /// The regular expression (ICU syntax) of the preset.
    var pattern: String {
        switch self {
        case .creditCardNumber: #"\b[1-6](?:[ -]*\d){12,18}\b"#
        case .date:
            #"\b(?:(?:0?[1-9]|1[0-2])([/.-])(?:0?[1-9]|[12]\d|3[01])|(?:0?[1-9]|[12]\d|3[01])([/.-])(?:0?[1-9]|1[0-2]))[/.-](?:\d{4}|\d{2})\b"#
        case .emailAddress: #"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\b"#
        case .internationalPhoneNumber: #"(?:\+|\b00)(?:[ -]*\d){7,15}\b"#
        case .ipv4: #"\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:/(?:3[0-2]|[12]?\d))?\b"#
        case .ipv6:
            #"(?<![0-9A-Fa-f:])(?:(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|(?:[0-9A-Fa-f]{1,4}:){1,7}:|(?:[0-9A-Fa-f]{1,4}:){1,6}(?::[0-9A-Fa-f]{1,4}){1}|(?:[0-9A-Fa-f]{1,4}:){1,5}(?::[0-9A-Fa-f]{1,4}){1,2}|(?:[0-9A-Fa-f]{1,4}:){1,4}(?::[0-9A-Fa-f]{1,4}){1,3}|(?:[0-9A-Fa-f]{1,4}:){1,3}(?::[0-9A-Fa-f]{1,4}){1,4}|(?:[0-9A-Fa-f]{1,4}:){1,2}(?::[0-9A-Fa-f]{1,4}){1,5}|[0-9A-Fa-f]{1,4}:(?::[0-9A-Fa-f]{1,4}){1,6}|:(?::[0-9A-Fa-f]{1,4}){1,7})(?![0-9A-Fa-f:])"#
        case .macAddress: #"\b[0-9A-Fa-f]{2}([:-])[0-9A-Fa-f]{2}(?:\1[0-9A-Fa-f]{2}){4}\b"#
        case .northAmericanPhoneNumber: #"(?:\+?1[ .-]?)?(?:\([2-9]\d{2}\)|\b[2-9]\d{2})[ .-]?[2-9]\d{2}[ .-]?\d{4}\b"#
        case .socialSecurityNumber: #"\b(?:\d{3}-\d{2}-\d{4}|\d{9})\b"#
        case .time: #"\b(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?:\s?[AaPp][Mm])?\b"#
        case .url: #"\bhttps?://(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}(?::\d+)?(?:[/?#][^\s]*)?"#
        case .usZipCode: #"\b\d{5}(?:[-/]\d{4})?\b"#
        case .vin: #"\b[A-HJ-NPR-Z0-9]{12}\d{5}\b"#
        }
    }
}
