import Foundation
import Hummingbird
import InstantJSON
import InstantTesting
import Testing

@testable import InstantServer

@Suite("docs/openapi.yaml", .timeLimit(.minutes(10)))
struct OpenAPIDocumentTests {
    /// One operation of the description.
    struct Operation {
        /// The HTTP method, lowercase as in the file.
        var method: String
        /// The path template, for example `/api/documents/{documentId}`.
        var path: String
        /// The statuses documented for it.
        var statuses: Set<Int>
    }

    /// The description's file.
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/openapi.yaml")

    /// The operations of the description, read by indentation: paths at 2 spaces, methods at 4
    /// (`get:`, `get: &anchor` or `get: *anchor`, an alias repeating the anchored operation), and
    /// status codes at 8 under a method's `responses:`.
    static func operations() throws -> [Operation] {
        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map(String.init)
        let methods: Set<String> = ["get", "post", "put", "delete"]
        func indent(_ line: String) -> Int { line.prefix { $0 == " " }.count }
        func key(_ line: String) -> String {
            String(line.drop { $0 == " " }.prefix { $0 != ":" }).trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        }
        func value(_ line: String) -> String {
            line.firstIndex(of: ":").map { line[line.index(after: $0)...].trimmingCharacters(in: .whitespaces) } ?? ""
        }
        guard let start = lines.firstIndex(of: "paths:") else { return [] }
        var result: [Operation] = []
        var anchors: [String: Int] = [:]
        var path: String?
        var current: Int?
        var inResponses = false
        for line in lines[(start + 1)...] where !line.trimmingCharacters(in: .whitespaces).hasPrefix("#") {
            switch indent(line) {
            case 0: return result
            case 2:
                path = key(line)
                current = nil
                inResponses = false
            case 4:
                current = nil
                inResponses = false
                guard let path, methods.contains(key(line)) else { continue }
                let reference = value(line)
                var operation = Operation(method: key(line), path: path, statuses: [])
                if reference.hasPrefix("*") {
                    let anchored = try #require(anchors[String(reference.dropFirst())], "\(reference) has no anchor")
                    operation.statuses = result[anchored].statuses
                } else {
                    current = result.count
                    if reference.hasPrefix("&") { anchors[String(reference.dropFirst())] = result.count }
                }
                result.append(operation)
            case 6: inResponses = key(line) == "responses"
            case 8:
                if inResponses, let current, let status = Int(key(line)) { result[current].statuses.insert(status) }
            default: continue
            }
        }
        return result
    }

    /// `METHOD /path` with the names of path parameters lowercased (the server says `documentID`,
    /// the description `documentId`).
    static func signature(_ method: String, _ path: String) -> String {
        var normalized = ""
        var inParameter = false
        for character in path {
            if character == "{" { inParameter = true }
            if character == "}" { inParameter = false }
            normalized.append(inParameter ? Character(character.lowercased()) : character)
        }
        return "\(method.uppercased()) \(normalized)"
    }

    @Test func describesExactlyTheServersRoutes() async throws {
        let operations = try Self.operations()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let configuration = InstantServerConfiguration(hostname: "127.0.0.1", port: 0, apiAuthToken: "token")
        let routers = try await buildInstantRouters(
            configuration: configuration,
            storage: try InstantStorage.sqlite(directory: directory.url),
            importer: InstantPDFImporter(),
            pdfWork: PDFWorkPool(configuration: configuration.pdfProcessing)
        )
        let served = Set(
            routers.http.routes.map {
                Self.signature($0.method.rawValue, $0.path.description)
            })
        let documented = operations.map { Self.signature($0.method, $0.path) }
        #expect(documented.count == Set(documented).count, "an operation is described twice")
        #expect(served.subtracting(documented).sorted() == [], "served but not described in docs/openapi.yaml")
        #expect(Set(documented).subtracting(served).sorted() == [], "described but not served")
        for operation in operations {
            #expect(!operation.statuses.isEmpty, "\(Self.signature(operation.method, operation.path)) has no responses")
        }
    }

    @Test func everyAnswerOfTheServerIsDocumented() async throws {
        // Deletions last, the document's own last, so that every other operation finds its data.
        let operations = try Self.operations().enumerated().sorted { lhs, rhs in
            let (left, right) = (lhs.element, rhs.element)
            if (left.method == "delete") != (right.method == "delete") { return right.method == "delete" }
            if left.method == "delete", left.path.count != right.path.count {
                return left.path.count > right.path.count
            }
            return lhs.offset < rhs.offset
        }.map(\.element)
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
            let defaultLayerJWT = try await key.token(
                ClientClaims(
                    documentID: id, permissions: ["read-document", "write", "download"],
                    expiration: Date().addingTimeInterval(600)))
            // Client routes of a named layer need a token for that layer.
            let namedLayerJWT = try await key.token(
                ClientClaims(
                    documentID: id, layer: "review", permissions: ["read-document", "write", "download"],
                    expiration: Date().addingTimeInterval(600)))
            for operation in operations {
                let name = Self.signature(operation.method, operation.path)
                let method = try #require(HTTPRequest.Method(operation.method.uppercased()))
                func uri(document: String) -> String {
                    let path = operation.path.replacingOccurrences(of: "{documentId}", with: document)
                        .replacingOccurrences(of: "{layerName}", with: "review")
                        .replacingOccurrences(of: "{annotationId}", with: "a-1")
                        .replacingOccurrences(of: "{bookmarkId}", with: "b-1")
                        .replacingOccurrences(of: "{formFieldId}", with: "f-1")
                        .replacingOccurrences(of: "{formFieldWidgetId}", with: "w-1")
                        .replacingOccurrences(of: "{attachmentId}", with: sha)
                        .replacingOccurrences(of: "{pageIndex}", with: "0")
                        .replacingOccurrences(of: "{folder}/{name}/{file}", with: "web/standard_fonts/FoxitSans.pfb")
                        .replacingOccurrences(of: "{folder}/{name}", with: "build/pdf.js")
                        .replacingOccurrences(of: "{file}", with: "viewer.js")
                    return path.hasSuffix("/listen") ? path + "?since=99" : path
                }
                let isClientRoute = operation.path.hasPrefix("/i/")
                var body: Data? = method == .get ? nil : Data("{}".utf8)
                if operation.path.hasSuffix("/sync") { body = Data(#"{"clientId":"c","baseRevision":0}"#.utf8) }
                var headers: HTTPFields = [.contentType: "application/json"]
                if isClientRoute {
                    let jwt = operation.path.contains("/l/{layerName}") ? namedLayerJWT : defaultLayerJWT
                    headers[.authorization] = "Token token=\"\(jwt)\""
                }

                // With credentials: a documented status.
                let reply = try await client.request(method, uri(document: id), headers: headers, body: body)
                #expect(
                    operation.statuses.contains(reply.status.code),
                    "\(name) answered \(reply.status.code) (\(reply.reason ?? "")), not documented")

                guard operation.path.hasPrefix("/api/") || isClientRoute else { continue }
                // Without credentials: 401, documented.
                var anonymous = headers
                anonymous[.authorization] = nil
                let refused = try await client.request(
                    method, uri(document: id), headers: anonymous, body: body, apiToken: nil)
                #expect(refused.status == .unauthorized, "\(name) without credentials answered \(refused.status)")
                #expect(operation.statuses.contains(refused.status.code), "\(name): 401 is not documented")
                #expect(refused.reason != nil, "\(name): the 401 has no {\"error\": {\"reason\"}} body")

                // For a document that does not exist: a documented error with a reason.
                guard operation.path.contains("{documentId}") else { continue }
                let missing = try await client.request(
                    method, uri(document: "no-such-document"), headers: headers, body: body)
                #expect(
                    operation.statuses.contains(missing.status.code) && missing.reason != nil,
                    "\(name) for an unknown document answered \(missing.status.code) (\(missing.reason ?? "no reason")), not documented"
                )
            }
        }
    }

    /// Whether `python3 -m openapi_spec_validator` can run here.
    static let validatorIsInstalled =
        (try? ChildProcess.runBlocking("python3", ["-c", "import openapi_spec_validator"]).status) == 0

    @Test(
        .enabled(
            if: validatorIsInstalled,
            "python3 with openapi-spec-validator is not installed: pip install openapi-spec-validator (.ci/run installs it)."
        ))
    func openAPISpecValidatorAcceptsTheFile() throws {
        let result = try ChildProcess.runBlocking(
            "python3", ["-m", "openapi_spec_validator", Self.file.path], includingErrors: true)
        #expect(result.status == 0, "openapi-spec-validator refuses docs/openapi.yaml:\n\(result.output)")
    }
}
