import Foundation
import Hummingbird
import HummingbirdTesting
import InstantJSON
import InstantTesting
import Testing

@testable import InstantServer

/// A live server on an ephemeral port over a real SQLite storage in a temporary directory.
struct ServerHarness {
    static let apiToken = "secret-api-token"

    let directory: URL
    var jwt: JWTConfiguration?
    var maxBodySize = 8 * 1024 * 1024
    var clientLimits = ClientLimits()
    var longPollTimeout: Duration = .seconds(50)
    /// Long header and idle timeouts by default: the test client keeps one connection for the
    /// whole test, opened before the test's first request.
    var httpLimits = HTTPLimits(headerTimeout: .seconds(600), idleTimeout: .seconds(600))
    var pdfProcessing = PDFProcessingConfiguration()
    /// The pool of the server's PDF work; one as `pdfProcessing` says when `nil`.
    var pdfWork: PDFWorkPool?
    var documentDownload = DocumentDownloadConfiguration()

    /// Runs `body` against a freshly started server; the server stops afterwards.
    func run<Value: Sendable>(_ body: @Sendable (Client) async throws -> Value) async throws -> Value {
        let storage = try InstantStorage.sqlite(directory: directory)
        var configuration = InstantServerConfiguration(
            hostname: "127.0.0.1",
            port: 0,
            apiAuthToken: Self.apiToken,
            jwt: jwt,
            maxBodySize: maxBodySize,
            clientLimits: clientLimits,
            longPollTimeout: longPollTimeout,
            pdfProcessing: pdfProcessing
        )
        configuration.httpLimits = httpLimits
        configuration.documentDownload = documentDownload
        let app = try await buildInstantApplication(
            configuration: configuration,
            storage: storage,
            importer: InstantPDFImporter(),
            pdfWork: pdfWork
        )
        return try await app.test(.live) { client in
            try await body(Client(client: client))
        }
    }

    /// A thin client: JSON in, JSON out, with the API token unless told otherwise.
    struct Client: Sendable {
        let client: any TestClientProtocol

        struct Reply {
            var status: HTTPResponse.Status
            var headers: HTTPFields
            var body: Data
            var json: JSONValue? { try? JSONValue.parse(body) }
            var data: JSONValue? { json?["data"] }
            var reason: String? { json?["error"]?["reason"]?.stringValue }
        }

        @discardableResult
        func request(
            _ method: HTTPRequest.Method,
            _ uri: String,
            headers: HTTPFields = [:],
            body: Data? = nil,
            apiToken: String? = ServerHarness.apiToken
        ) async throws -> Reply {
            var headers = headers
            if let apiToken, headers[.authorization] == nil {
                headers[.authorization] = "Token token=\"\(apiToken)\""
            }
            let response = try await client.execute(
                uri: uri,
                method: method,
                headers: headers,
                body: body.map { ByteBuffer(bytes: $0) }
            )
            return Reply(
                status: response.status,
                headers: response.headers,
                body: Data(response.body.readableBytesView)
            )
        }

        @discardableResult
        func json(_ method: HTTPRequest.Method, _ uri: String, _ value: JSONValue) async throws -> Reply {
            try await request(method, uri, headers: [.contentType: "application/json"], body: value.encoded())
        }

        /// Uploads a PDF as the raw body and returns the new document's id.
        func upload(_ pdf: Data) async throws -> String {
            let reply = try await request(
                .post, "/api/documents", headers: [.contentType: "application/pdf"], body: pdf)
            #expect(reply.status == .ok, "\(reply.reason ?? "")")
            return try #require(reply.data?["document_id"]?.stringValue)
        }

        /// A `multipart/form-data` body of text fields and files.
        static func multipart(boundary: String, parts: [(name: String, filename: String?, type: String?, data: Data)])
            -> Data
        {
            var body = Data()
            for part in parts {
                var header = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(part.name)\""
                if let filename = part.filename { header += "; filename=\"\(filename)\"" }
                header += "\r\n"
                if let type = part.type { header += "Content-Type: \(type)\r\n" }
                body.append(Data((header + "\r\n").utf8))
                body.append(part.data)
                body.append(Data("\r\n".utf8))
            }
            body.append(Data("--\(boundary)--\r\n".utf8))
            return body
        }
    }
}

/// An annotation's Instant JSON content.
func noteContent(page: Int = 0, text: String = "note", id: String? = nil) -> JSONValue {
    var object: JSONObject = [
        "v": 2,
        "type": "pspdfkit/note",
        "pageIndex": .integer(Int64(page)),
        "bbox": [10, 20, 30, 40],
        "text": ["format": "plain", "value": .string(text)],
        "icon": "comment",
        "createdAt": "2026-01-01T00:00:00Z",
        "updatedAt": "2026-01-01T00:00:00Z",
    ]
    if let id { object["id"] = .string(id) }
    return .object(object)
}

extension InstantStorage {
    /// Stores a PDF as a document of one letter-sized page directly, without importing it (as an
    /// earlier upload, under other limits, would have stored it); returns the document's id.
    func storeDocument(_ pdf: Data) async throws -> String {
        let id = "stored-\(UUID().uuidString)"
        try await createDocument(
            StoredDocument(
                id: id, title: nil, sourcePDFSHA256: Attachment.key(for: pdf), byteSize: pdf.count,
                pages: [PageInfo(width: 612, height: 792)], pdfID: nil, isPasswordProtected: false, createdAt: Date()),
            pdf: pdf, baseRecords: [])
        return id
    }
}
