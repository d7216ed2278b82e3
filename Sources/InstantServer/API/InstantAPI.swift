import Foundation
import Hummingbird
import InstantJSON
import Logging
import NIOCore

/// The shared state of the route handlers.
struct InstantAPI: Sendable {
    let storage: InstantStorage
    let importer: any DocumentImporter
    let configuration: InstantServerConfiguration
    /// Wakes listeners; the storage above reports to it.
    let events: LayerEvents
    /// Runs the CPU-heavy PDF work of uploads and exports off the threads that answer requests.
    let pdfWork: PDFWorkPool
    let identifiers = ULIDGenerator.shared
    /// Fetches the documents added from a URL.
    var download: DocumentDownload {
        DocumentDownload(configuration: configuration.documentDownload, bodyLimit: configuration.maxBodySize)
    }

    /// A path parameter, percent-decoded and checked against the identifier rules.
    func identifier(_ name: String, _ context: InstantRequestContext, what: String) throws(APIError) -> String {
        guard let raw = context.parameters.get(name) else {
            throw .badRequest("The path has no \(what).")
        }
        return try Self.pathIdentifier(raw, what: what)
    }

    /// A path segment, percent-decoded and checked against the identifier rules. A segment that
    /// breaks them names nothing that can exist, so it is answered 404 (as an unknown id is), with
    /// the rule it breaks.
    static func pathIdentifier(_ raw: some StringProtocol, what: String) throws(APIError) -> String {
        // Most ids are plain; only one with a `%` is decoded (Foundation's decoding is slow).
        guard let value = raw.utf8.contains(UInt8(ascii: "%")) ? raw.removingPercentEncoding : String(raw) else {
            throw .notFound("No \(what) can be '\(raw)': it is not valid percent-encoding.")
        }
        do {
            try Identifiers.validate(value, what: what)
        } catch {
            throw .notFound("Nothing has this \(what): \(error.reason)")
        }
        return value
    }

    /// The document id of the path.
    func documentID(_ context: InstantRequestContext) throws(APIError) -> String {
        try identifier("documentID", context, what: "document id")
    }

    /// The layer of the path: `""` for routes without `{layerName}`.
    func layerName(_ context: InstantRequestContext) throws(APIError) -> String {
        try Self.pathLayerName(context.parameters.get("layerName") ?? "")
    }

    /// The layer of a path segment (`""` for none), percent-decoded and checked against the rules of
    /// identifiers and layer names; 404 for a name no layer can have.
    static func pathLayerName(_ raw: some StringProtocol) throws(APIError) -> String {
        guard !raw.isEmpty else { return "" }
        let name = try pathIdentifier(raw, what: "layer name")
        do {
            try Identifiers.validateLayerName(name)
        } catch {
            throw .notFound("No layer can have this name: \(error.reason)")
        }
        return name
    }

    /// The document, or 404.
    func requireDocument(_ id: String) async throws -> StoredDocument {
        guard let document = try await storage.document(id: id) else {
            throw APIError.notFound("No document has the id '\(id)'.")
        }
        return document
    }

    /// The layer (a named layer never used before starts as a copy of the base records), or 404
    /// for an unknown document.
    @discardableResult
    func requireLayer(documentID: String, name: String) async throws -> StoredLayer {
        // A named layer mirrors the base records until it is written; it is created on first use.
        try await storage.layerCreatingIfNeeded(documentID: documentID, name: name)
    }

    /// A limit on a request body: its size, and the `instant serve` option that raises it.
    struct BodyLimit {
        var bytes: Int
        var option: String

        /// The 413 of a body of `size` bytes (a number, or words such as "more than …").
        func refusal(ofBodyWithSize size: String) -> APIError {
            APIError(
                .contentTooLarge,
                "The request body has \(size) bytes, more than this route's limit of \(bytes); send a smaller "
                    + "body, or ask the server's operator to raise \(option)."
            )
        }
    }

    /// The body limit of the backend API (`/api/...`).
    var backendBodyLimit: BodyLimit { BodyLimit(bytes: configuration.maxBodySize, option: "--max-body-size") }

    /// The whole request body, refused with 413 above `limit` (the backend API's by default)
    /// before more than `limit` bytes are held: a declared `Content-Length` over it is refused
    /// without reading, a streamed body as soon as it passes it.
    func body(_ request: Request, limit: BodyLimit? = nil) async throws -> Data {
        let limit = limit ?? backendBodyLimit
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit.bytes {
            throw limit.refusal(ofBodyWithSize: "\(length)")
        }
        do {
            let buffer = try await request.body.collect(upTo: limit.bytes)
            return Data(buffer.readableBytesView)
        } catch is NIOTooManyBytesError {
            throw limit.refusal(ofBodyWithSize: "more than \(limit.bytes)")
        }
    }

    /// The request body parsed as JSON (away from the event loop when it is large,
    /// ``LargeWork``), or 400; `limit` as for ``body(_:limit:)``.
    func jsonBody(_ request: Request, limit: BodyLimit? = nil) async throws -> JSONValue {
        let data = try await body(request, limit: limit)
        return try await LargeWork.run(bytes: data.count) { try Self.json(fromBody: data) }
    }

    /// A request body parsed as JSON, or 400.
    static func json(fromBody data: Data) throws -> JSONValue {
        guard !data.isEmpty else { throw APIError.badRequest("The request body is empty; send a JSON object.") }
        do {
            return try JSONValue.parse(data)
        } catch {
            throw APIError.badRequest("The request body is not valid JSON: \(error)")
        }
    }
}

/// Building responses.
extension InstantAPI {
    /// A JSON response.
    static func respond(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: value.encoded()))
        )
    }

    /// `{"data": value}`.
    static func data(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        respond(["data": value], status: status)
    }

    /// The API shape of a record: `{id, content, createdBy, updatedBy, group}`.
    static func recordJSON(_ record: StoredRecord) -> JSONValue {
        let content = record.isDeleted ? JSONValue.null : ((try? JSONValue.parse(record.content)) ?? .null)
        return [
            "id": .string(record.id),
            "content": content,
            "createdBy": .optional(record.createdBy),
            "updatedBy": .optional(record.updatedBy),
            "group": .optional(record.group),
        ]
    }

    /// ISO 8601 with fractional seconds, UTC.
    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
