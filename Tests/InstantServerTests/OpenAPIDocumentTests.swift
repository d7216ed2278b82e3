import Foundation
import Hummingbird
import InstantJSON
import InstantTesting
import Testing

@testable import InstantServer

@Suite("docs/openapi.yaml")
struct OpenAPIDocumentTests {
    /// The operations of the description: every path with its methods, path items resolved.
    static func operations() throws -> [(method: String, path: String)] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let lines = try String(contentsOf: root.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let methods = ["get", "post", "put", "delete"]
        func indent(_ line: String) -> Int { line.prefix { $0 == " " }.count }
        func key(_ line: String) -> String {
            String(line.drop { $0 == " " }.prefix { $0 != ":" })
        }
        // Path items under components.pathItems.
        var items: [String: [String]] = [:]
        if let start = lines.firstIndex(of: "  pathItems:") {
            var current: String?
            for line in lines[(start + 1)...] {
                if !line.isEmpty, indent(line) < 4 { break }
                if indent(line) == 4 { current = key(line) }
                if indent(line) == 6, methods.contains(key(line)), let current {
                    items[current, default: []].append(key(line))
                }
            }
        }
        var result: [(String, String)] = []
        guard let start = lines.firstIndex(of: "paths:") else { return [] }
        var path: String?
        for line in lines[(start + 1)...] {
            if !line.isEmpty, indent(line) == 0 { break }
            if indent(line) == 2, line.dropFirst(2).hasPrefix("/") {
                path = String(line.dropFirst(2).prefix { $0 != ":" })
            }
            guard let path else { continue }
            if let range = line.range(of: "#/components/pathItems/") {
                let name = String(line[range.upperBound...].prefix { $0 != "'" })
                for method in items[name] ?? [] { result.append((method, path)) }
            } else if indent(line) == 4, methods.contains(key(line)) {
                result.append((key(line), path))
            }
        }
        return result
    }

    @Test func everyDocumentedOperationIsServed() async throws {
        let operations = try Self.operations()
        #expect(operations.count >= 50, "the description lists the whole API")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let key = try await TestSigningKey(.es256)
        var harness = ServerHarness(directory: directory.url)
        harness.jwt = key.jwtConfiguration
        harness.longPollTimeout = .milliseconds(100)
        try await harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            try await client.json(.post, "/api/documents/\(id)/layers", ["name": "review"])
            try await client.json(.post, "/api/documents/\(id)/annotations", ["content": noteContent(id: "a-1")])
            let attachment = try await client.request(
                .post, "/api/documents/\(id)/attachments", headers: [.contentType: "image/png"], body: Data("png".utf8))
            let sha = try #require(attachment.data?["id"]?.stringValue)
            let jwt = try await key.token(
                ClientClaims(
                    documentID: id, permissions: ["read-document", "write", "download"],
                    expiration: Date().addingTimeInterval(600)))
            for (method, template) in operations {
                let path = template.replacingOccurrences(of: "{documentId}", with: id)
                    .replacingOccurrences(of: "{layerName}", with: "review")
                    .replacingOccurrences(of: "{annotationId}", with: "a-1")
                    .replacingOccurrences(of: "{bookmarkId}", with: "b-1")
                    .replacingOccurrences(of: "{attachmentId}", with: sha)
                    .replacingOccurrences(of: "{pageIndex}", with: "0")
                var headers: HTTPFields = [.contentType: "application/json"]
                var body: Data? = method == "get" ? nil : Data("{}".utf8)
                if path.hasPrefix("/i/") {
                    headers[.authorization] = "Token token=\"\(jwt)\""
                    if path.contains("/l/review") {
                        // Client routes of a named layer need a token for that layer.
                        let layerJWT = try await key.token(
                            ClientClaims(
                                documentID: id, layer: "review", permissions: ["read-document", "write"],
                                expiration: Date().addingTimeInterval(600)))
                        headers[.authorization] = "Token token=\"\(layerJWT)\""
                    }
                    if path.hasSuffix("/sync") { body = Data(#"{"clientId":"c","baseRevision":0}"#.utf8) }
                }
                let uri = path.hasSuffix("/listen") ? path + "?since=99" : path
                let reply = try await client.request(
                    HTTPRequest.Method(method.uppercased())!, uri, headers: headers, body: body)
                let unrouted = reply.status == .methodNotAllowed || (reply.status == .notFound && reply.json == nil)
                #expect(!unrouted, "\(method.uppercased()) \(template) is documented but not served (\(reply.status))")
            }
        }
    }
}
