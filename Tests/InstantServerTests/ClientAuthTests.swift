import Foundation
import Hummingbird
import InstantJSON
import InstantTesting
import JWTKit
import Synchronization
import Testing

@testable import InstantServer

@Suite("Client routes and JWT auth", .timeLimit(.minutes(10)))
struct ClientAuthTests {
    static func claims(
        document: String,
        layer: String? = nil,
        permissions: [String] = ["read-document", "write", "download"],
        expiresIn: TimeInterval = 3600,
        notBefore: Date? = nil,
        tokenID: String? = nil
    ) -> ClientClaims {
        ClientClaims(
            documentID: document,
            layer: layer,
            permissions: permissions,
            userID: "alice",
            expiration: Date().addingTimeInterval(expiresIn),
            notBefore: notBefore,
            tokenID: tokenID
        )
    }

    static func bearer(_ token: String) -> HTTPFields {
        [.authorization: "Token token=\"\(token)\""]
    }

    @Test(arguments: [JWTSigningAlgorithm.rs256, .rs512, .es256, .es512])
    func everyAlgorithmGrantsTheSnapshotAndPDF(algorithm: JWTSigningAlgorithm) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let key = try await TestSigningKey(algorithm)
        var harness = ServerHarness(directory: directory.url)
        harness.jwt = key.jwtConfiguration
        let pdf = TestPDF.make(pageCount: 1)
        try await harness.run { client in
            let id = try await client.upload(pdf)
            _ = try await client.json(.post, "/api/documents/\(id)/annotations", ["content": noteContent(id: "a-1")])
            let token = try await key.token(Self.claims(document: id))

            let snapshot = try await client.request(
                .get, "/i/d/\(id)/snapshot", headers: Self.bearer(token), apiToken: nil)
            #expect(snapshot.status == .ok, "\(snapshot.reason ?? "")")
            #expect(snapshot.json?["revision"]?.integerValue == 1)
            #expect(snapshot.json?["records"]?.arrayValue?.map { $0["id"]?.stringValue } == ["a-1"])
            #expect(snapshot.json?["records"]?.arrayValue?.first?["kind"]?.stringValue == "annotation")

            let download = try await client.request(.get, "/i/d/\(id)/pdf", headers: Self.bearer(token), apiToken: nil)
            #expect(download.status == .ok)
            #expect(download.body == pdf)
            let viaQuery = try await client.request(.get, "/i/d/\(id)/pdf?jwt=\(token)", apiToken: nil)
            #expect(viaQuery.status == .ok)
        }
    }

    @Test func aNamedLayerNeverWrittenMirrorsTheDocument() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let key = try await TestSigningKey(.es256)
        var harness = ServerHarness(directory: directory.url)
        harness.jwt = key.jwtConfiguration
        try await harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let token = try await key.token(Self.claims(document: id, layer: "alice-notes"))
            let snapshot = try await client.request(
                .get,
                "/i/d/\(id)/l/alice-notes/snapshot",
                headers: Self.bearer(token),
                apiToken: nil
            )
            #expect(snapshot.status == .ok)
            #expect(snapshot.json?["records"]?.arrayValue?.isEmpty == true)
            let pdf = try await client.request(
                .get, "/i/d/\(id)/l/alice-notes/pdf", headers: Self.bearer(token), apiToken: nil)
            #expect(pdf.status == .ok)
            let wrongRoute = try await client.request(
                .get, "/i/d/\(id)/pdf", headers: Self.bearer(token), apiToken: nil)
            #expect(wrongRoute.status == .forbidden)
            let layers = try await client.request(.get, "/api/documents/\(id)/layers")
            #expect(layers.data == ["alice-notes"])
        }
    }

    @Test func everyRefusalSaysWhy() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let key = try await TestSigningKey(.rs256)
        let otherKey = try await TestSigningKey(.rs256)
        var harness = ServerHarness(directory: directory.url)
        harness.jwt = key.jwtConfiguration
        try await harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let path = "/i/d/\(id)/snapshot"

            func attempt(_ token: String?) async throws -> ServerHarness.Client.Reply {
                try await client.request(.get, path, headers: token.map(Self.bearer) ?? [:], apiToken: nil)
            }

            let missing = try await attempt(nil)
            #expect(missing.status == .unauthorized)
            #expect(missing.reason?.contains("needs a JWT") == true)

            let forged = try await otherKey.token(Self.claims(document: id))
            let badSignature = try await attempt(forged)
            #expect(badSignature.status == .forbidden)
            #expect(badSignature.reason?.contains("signature") == true)

            let unsigned = try Self.unsignedToken(Self.claims(document: id))
            #expect(try await attempt(unsigned).reason?.contains("alg 'none'") == true)

            // HMAC "signed" with the public key, the classic key-confusion attack.
            let hmacKeys = JWTKeyCollection()
            await hmacKeys.add(hmac: HMACKey(from: key.publicKeyPEM), digestAlgorithm: .sha256)
            let confused = try await hmacKeys.sign(Self.claims(document: id))
            let hmac = try await attempt(confused)
            #expect(hmac.status == .forbidden)
            #expect(hmac.reason?.contains("HMAC") == true)

            let expired = try await attempt(try await key.token(Self.claims(document: id, expiresIn: -600)))
            #expect(expired.status == .forbidden)
            #expect(expired.reason?.contains("expired") == true)

            let early = try await attempt(
                try await key.token(Self.claims(document: id, notBefore: Date().addingTimeInterval(3600)))
            )
            #expect(early.reason?.contains("not valid before") == true)

            let otherDocument = try await attempt(try await key.token(Self.claims(document: "other")))
            #expect(otherDocument.status == .forbidden)
            #expect(otherDocument.reason?.contains("document 'other'") == true)

            let otherLayer = try await attempt(try await key.token(Self.claims(document: id, layer: "x")))
            #expect(otherLayer.reason?.contains("layer 'x'") == true)

            let noRead = try await attempt(try await key.token(Self.claims(document: id, permissions: ["write"])))
            #expect(noRead.status == .forbidden)
            #expect(noRead.reason?.contains("read-document") == true)

            let noExpiry = try await attempt(
                try await key.token(ClientClaims(documentID: id, permissions: ["read-document"], expiration: nil))
            )
            #expect(noExpiry.reason?.contains("'exp'") == true)

            #expect(try await attempt("not.a.jwt").status == .forbidden)

            // The PDF needs 'download' or 'read-document'.
            let downloadOnly = try await key.token(Self.claims(document: id, permissions: ["download"]))
            #expect(
                try await client.request(.get, "/i/d/\(id)/pdf", headers: Self.bearer(downloadOnly), apiToken: nil)
                    .status
                    == .ok
            )
            let writeOnly = try await key.token(Self.claims(document: id, permissions: ["write"]))
            #expect(
                try await client.request(.get, "/i/d/\(id)/pdf", headers: Self.bearer(writeOnly), apiToken: nil).status
                    == .forbidden
            )
        }
    }

    @Test func revokedTokensStopWorkingAtOnce() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let key = try await TestSigningKey(.es512)
        var harness = ServerHarness(directory: directory.url)
        harness.jwt = key.jwtConfiguration
        try await harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let first = try await key.token(Self.claims(document: id, tokenID: "session-1"))
            let second = try await key.token(Self.claims(document: id, tokenID: "session-2"))
            let path = "/i/d/\(id)/snapshot"
            #expect(try await client.request(.get, path, headers: Self.bearer(first), apiToken: nil).status == .ok)
            // Sync requests, which the connection answers ahead of the router, with a token it knows.
            let pulls = SyncClient(client, documentID: id, token: first, clientID: "c")
            #expect(try await pulls.sync().status == .ok)

            let revoked = try await client.json(.post, "/api/revoke", ["jwts": [.string(first)]])
            #expect(revoked.status == .ok)
            #expect(revoked.data == ["session-1"])
            let refused = try await client.request(.get, path, headers: Self.bearer(first), apiToken: nil)
            #expect(refused.status == .forbidden)
            #expect(refused.reason?.contains("revoked") == true)
            let refusedSync = try await pulls.sync()
            #expect(refusedSync.status == .forbidden)
            #expect(refusedSync.reason?.contains("revoked") == true)
            #expect(try await client.request(.get, path, headers: Self.bearer(second), apiToken: nil).status == .ok)

            #expect(try await client.json(.post, "/api/revoke", ["jtis": ["session-2"]]).status == .ok)
            #expect(
                try await client.request(.get, path, headers: Self.bearer(second), apiToken: nil).status == .forbidden)

            #expect(try await client.json(.post, "/api/revoke", ["jwts": ["garbage"]]).status == .badRequest)
            let long = JSONValue.string(String(repeating: "x", count: 1025))
            let partly = try await client.json(.post, "/api/revoke", ["jtis": [long, "session-3"]])
            #expect(partly.json?["result"] == "partial_failure")
            #expect(partly.json?["data"] == ["session-3"])
            #expect(try await client.json(.post, "/api/revoke", ["jtis": [long]]).status == .badRequest)
            #expect(try await client.json(.post, "/api/revoke", [:]).status == .badRequest)
            let unauthenticated = try await client.request(
                .post,
                "/api/revoke",
                headers: [.contentType: "application/json"],
                body: Data("{}".utf8),
                apiToken: nil
            )
            #expect(unauthenticated.status == .unauthorized)
        }
    }

    @Test func aTokenVerifiedBeforeIsCheckedAgainWithoutAWaitWhileItsRevocationIsKnown() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let now = Mutex(Date())
        let storage = try InstantStorage.sqlite(directory: directory.url, clock: { now.withLock { $0 } })
        let key = try await TestSigningKey(.es256)
        let verifier = try await ClientTokenVerifier(configuration: key.jwtConfiguration, storage: storage)
        func code(of token: String, at date: Date = Date()) -> ClientTokenError.Code? {
            do throws(ClientTokenError) {
                _ = try verifier.knownToken(token, now: date)
                return nil
            } catch {
                return error.code
            }
        }

        let token = try await key.token(Self.claims(document: "d", tokenID: "session-1"))
        #expect(try verifier.knownToken(token) == nil, "its signature was never checked")
        let verified = try await verifier.verify(token)
        #expect(try verifier.knownToken(token) == verified)
        now.withLock { $0 += TokenRevocations.recheckInterval + 1 }
        #expect(try verifier.knownToken(token) == nil, "whether it was revoked is to be read again")
        #expect(try await verifier.verify(token) == verified)
        #expect(try verifier.knownToken(token) == verified)
        try await storage.revokeTokens(ids: ["session-1"])
        #expect(code(of: token) == .revoked)

        let withoutID = try await key.token(Self.claims(document: "d", expiresIn: 60))
        _ = try await verifier.verify(withoutID)
        now.withLock { $0 += 3600 }
        #expect(try verifier.knownToken(withoutID) != nil, "no revocation to read for a token without an id")
        #expect(code(of: withoutID, at: Date().addingTimeInterval(120)) == .expired)
        #expect(try verifier.knownToken("not.a.token") == nil)
    }

    @Test func authorizationHeadersNameTheirTokenInEveryAcceptedForm() {
        let forms: [(header: String, token: String?)] = [
            (#"Token token="abc.def""#, "abc.def"),
            ("Token token=abc.def", "abc.def"),
            (#"  token   TOKEN="abc"  "#, "abc"),
            ("\tToken token=abc\t", "abc"),
            ("Bearer abc.def", "abc.def"),
            ("bEaReR   abc ", "abc"),
            ("Bearer ", nil),
            (#"Token token="""#, nil),
            (#"Token token=""#, nil),
            (#"Token token="abc"#, nil),
            ("Token abc", nil),
            ("Basic YWxhZGRpbjpvcGVuc2VzYW1l", nil),
            ("Tokentoken=abc", nil),
            ("", nil),
            (#"Token token="ä€""#, "ä€"),
        ]
        for form in forms {
            #expect(AuthorizationHeader.token(from: form.header) == form.token, "\(form.header)")
        }
    }

    @Test func clientRoutesWithoutAConfiguredKeyRefuseClearly() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let reply = try await client.request(
                .get, "/i/d/\(id)/snapshot", headers: Self.bearer("a.b.c"), apiToken: nil)
            #expect(reply.status == .internalServerError)
            #expect(reply.reason?.contains("JWT_PUBLIC_KEY") == true)
        }
    }

    /// A token with `alg: none` and no signature.
    static func unsignedToken(_ claims: ClientClaims) throws -> String {
        func encode(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let header = encode(Data("{\"alg\":\"none\",\"typ\":\"JWT\"}".utf8))
        let payload = encode(try JSONEncoder().encode(claims))
        return "\(header).\(payload)."
    }
}
