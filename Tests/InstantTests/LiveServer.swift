import Foundation
import InstantJSON
import InstantServer
import InstantTesting
import Testing

@testable import Instant

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real `InstantServer` on loopback over SQLite in a temporary directory, with a document.
final class LiveServer: @unchecked Sendable {
    let root: URL
    let key: TestSigningKey
    private(set) var server: InstantTestServer
    let documentID: String

    /// The limits of the server's client routes.
    let clientLimits: ClientLimits

    /// Starts a server and uploads a PDF (two pages unless told otherwise).
    init(
        longPollTimeout: Duration = .seconds(5), pageCount: Int = 2, clientLimits: ClientLimits = ClientLimits()
    ) async throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("instant-sdk-\(UUID().uuidString)")
        key = try await TestSigningKey(.es256)
        self.clientLimits = clientLimits
        server = try await Self.startServer(
            root: root, key: key, longPollTimeout: longPollTimeout, clientLimits: clientLimits)
        documentID = try await Self.upload(TestPDF.make(pageCount: pageCount, seed: 7), to: server)
    }

    /// Uploads another PDF, as the customer's backend would.
    /// - Returns: The new document's id.
    func upload(_ pdf: Data) async throws -> String {
        try await Self.upload(pdf, to: server)
    }

    private static func upload(_ pdf: Data, to server: InstantTestServer) async throws -> String {
        var request = URLRequest(url: server.baseURL.appendingPathComponent("api/documents"))
        request.httpMethod = "POST"
        request.httpBody = pdf
        request.setValue("application/pdf", forHTTPHeaderField: "Content-Type")
        request.setValue("Token token=\"\(server.apiAuthToken)\"", forHTTPHeaderField: "Authorization")
        let (data, _) = try await URLSession.shared.data(for: request)
        return try #require(try JSONValue(parsing: data)["data"]?["document_id"]?.stringValue)
    }

    private static func startServer(
        root: URL, key: TestSigningKey, longPollTimeout: Duration, clientLimits: ClientLimits
    ) async throws -> InstantTestServer {
        try await InstantTestServer.start(
            storage: try InstantStorage.sqlite(directory: root.appendingPathComponent("server")),
            importer: InstantPDFImporter(), jwt: key.jwtConfiguration, apiAuthToken: "api-token",
            clientLimits: clientLimits, longPollTimeout: longPollTimeout)
    }

    /// Stops the server (its data stays) and starts it again on a new port.
    func restart() async throws {
        await server.stop()
        server = try await Self.startServer(
            root: root, key: key, longPollTimeout: .seconds(5), clientLimits: clientLimits)
    }

    func stop() async { await server.stop() }

    /// A client JWT for the document.
    func token(
        layer: String? = nil, user: String? = "alice", permissions: [String] = ["read-document", "write", "download"],
        defaultGroup: String? = nil, tokenID: String? = nil
    ) async throws -> String {
        try await key.token(
            ClientClaims(
                documentID: documentID, layer: layer, permissions: permissions, userID: user,
                defaultGroup: defaultGroup, expiration: Date().addingTimeInterval(3600), tokenID: tokenID))
    }

    /// Revokes a client JWT through the server's REST API, as the customer's backend would.
    func revoke(_ jwt: String) async throws {
        var request = URLRequest(url: server.baseURL.appendingPathComponent("api/revoke"))
        request.httpMethod = "POST"
        request.httpBody = JSONValue.object(["jwts": [.string(jwt)]]).serialized()
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("Token token=\"\(server.apiAuthToken)\"", forHTTPHeaderField: "Authorization")
        let (_, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
    }

    /// A fresh data directory for a client.
    func clientDirectory(_ name: String) -> URL {
        root.appendingPathComponent("clients").appendingPathComponent(name)
    }

    /// A client of this server with its own data directory.
    func client(_ name: String) throws -> InstantClient {
        try InstantClient(serverURL: server.baseURL, dataDirectory: clientDirectory(name))
    }

    /// The descriptor of the JWT's layer, downloaded (`clean`).
    func downloaded(_ client: InstantClient, jwt: String) async throws -> InstantDocumentDescriptor {
        let descriptor = try client.documentDescriptor(forJWT: jwt)
        try descriptor.download(usingJWT: jwt)
        #expect(try await eventually { descriptor.documentState == .clean })
        return descriptor
    }

    /// The annotations the server has on the default layer, by id.
    func serverAnnotations() async throws -> [String: JSONValue] {
        var request = URLRequest(url: server.baseURL.appendingPathComponent("api/documents/\(documentID)/annotations"))
        request.setValue("Token token=\"\(server.apiAuthToken)\"", forHTTPHeaderField: "Authorization")
        let (data, _) = try await URLSession.shared.data(for: request)
        let list = try JSONValue(parsing: data)["data"]?["annotations"]?.arrayValue ?? []
        return Dictionary(
            uniqueKeysWithValues: list.compactMap { item in
                item["id"]?.stringValue.map { ($0, item["content"] ?? .null) }
            })
    }

    func remove() { try? FileManager.default.removeItem(at: root) }
}

/// A note annotation.
func note(page: Int = 0, text: String = "note") throws -> Annotation {
    try Annotation(
        json: [
            "v": 2, "type": "pspdfkit/note", "pageIndex": .integer(Int64(page)), "bbox": [10, 20, 30, 40],
            "text": ["format": "plain", "value": .string(text)], "icon": "comment", "color": "#FFD700",
            "createdAt": "2026-01-01T00:00:00Z",
            "updatedAt": "2026-01-01T00:00:00Z",
        ])
}
