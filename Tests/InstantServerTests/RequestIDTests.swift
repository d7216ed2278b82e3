import Foundation
import HTTPTypes
import Hummingbird
import InstantJSON
import InstantTesting
import JWTKit
import Testing

@testable import InstantServer

@Suite("Request ids and token times", .timeLimit(.minutes(10)))
struct RequestIDTests {
    @Test func everyResponseCarriesARequestID() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let name = HTTPField.Name("X-Request-Id")!
            let given = try await client.request(.get, "/healthcheck", headers: [name: "trace-42"])
            #expect(given.headers[name] == "trace-42", "the caller's id is kept")
            let first = try await client.request(.get, "/api/documents/missing")
            let second = try await client.request(.get, "/api/documents/missing")
            #expect(first.status == .notFound)
            let firstID = try #require(first.headers[name])
            #expect(!firstID.isEmpty)
            #expect(firstID != second.headers[name], "each request gets its own id")
            let odd = try await client.request(.get, "/healthcheck", headers: [name: "has space"])
            #expect(odd.headers[name] != "has space", "an unusable id is replaced")
        }
    }

    @Test func tokenTimesAreWholeSeconds() async throws {
        let key = try await TestSigningKey(.rs256)
        let token = try await key.token(
            ClientClaims(
                documentID: "d", permissions: ["read-document"],
                expiration: Date(timeIntervalSince1970: 1_800_000_000.75),
                notBefore: Date(timeIntervalSince1970: 1_700_000_000.5)))
        let payload = try #require(ClientTokenVerifier.base64URLDecode(token.split(separator: ".")[1]))
        let claims = try JSONValue(parsing: payload)
        #expect(claims["exp"] == .integer(1_800_000_000))
        #expect(claims["nbf"] == .integer(1_700_000_000))
    }
}
