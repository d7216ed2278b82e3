import Foundation
import Testing

@testable import InstantServer

@Suite("Server setup", .timeLimit(.minutes(10)))
struct ServerSetupTests {
    @Test func developmentCredentialsAreCreatedOnceAndSignVerifiableTokens() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let created = try DevelopmentCredentials.loadOrCreate(in: directory.url)
        #expect(created.wereCreated)
        let again = try DevelopmentCredentials.loadOrCreate(in: directory.url)
        #expect(again.wereCreated == false)
        #expect(again.apiAuthToken == created.apiAuthToken)
        #expect(again.keyPair.publicKeyPEM == created.keyPair.publicKeyPEM)
        #expect(DevelopmentCredentials.load(from: directory.url)?.apiAuthToken == created.apiAuthToken)
        let permissions =
            try FileManager.default.attributesOfItem(
                atPath: directory.url.appendingPathComponent(DevelopmentCredentials.privateKeyFile).path
            )[.posixPermissions] as? Int
        #expect(permissions == 0o600)

        let storage = try InstantStorage.sqlite(directory: directory.url)
        let issuer = try await ClientTokenIssuer(privateKeyPEM: again.keyPair.privateKeyPEM, algorithm: .es256)
        let verifier = try await ClientTokenVerifier(
            configuration: JWTConfiguration(publicKeyPEM: created.keyPair.publicKeyPEM, algorithm: .es256),
            storage: storage
        )
        let token = try await issuer.sign(
            ClientClaims(
                documentID: "doc",
                layer: "notes",
                permissions: ["read-document"],
                userID: "u",
                expiration: Date().addingTimeInterval(60)
            )
        )
        let verified = try await verifier.verify(token)
        #expect(verified.documentID == "doc")
        #expect(verified.layer == "notes")
        #expect(verified.userID == "u")
        #expect(verified.permissions == ["read-document"])
    }

    @Test func unusableKeysAreRefusedAtStartup() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try InstantStorage.sqlite(directory: directory.url)
        let ecKey = DevelopmentKeyPair().publicKeyPEM
        await #expect(throws: ClientTokenError.self) {
            try await ClientTokenVerifier(
                configuration: JWTConfiguration(publicKeyPEM: ecKey, algorithm: .rs256),
                storage: storage
            )
        }
        await #expect(throws: ClientTokenError.self) {
            try await ClientTokenVerifier(
                configuration: JWTConfiguration(publicKeyPEM: ecKey, algorithm: JWTSigningAlgorithm(rawValue: "HS256")),
                storage: storage
            )
        }
    }

    @Test func storageLocations() throws {
        let data = URL(fileURLWithPath: "/srv/instant")
        func paths(_ location: StorageLocation) -> [String] {
            switch location {
            case .sqlite(let database, let pdfs): [database, pdfs.path]
            case .postgres(let configuration): [configuration.redactedURL]
            }
        }
        #expect(
            paths(try StorageLocation.resolve(databaseURL: nil, dataDirectory: data))
                == ["/srv/instant/instant.sqlite", "/srv/instant/pdfs"]
        )
        #expect(
            paths(try StorageLocation.resolve(databaseURL: "sqlite:///var/db/i.sqlite", dataDirectory: data))
                == ["/var/db/i.sqlite", "/srv/instant/pdfs"]
        )
        #expect(
            paths(try StorageLocation.resolve(databaseURL: "postgres://app:secret@db/instant", dataDirectory: data))
                == ["postgres://app@db:5432/instant"])
        #expect(throws: StorageError.self) {
            try StorageLocation.resolve(databaseURL: "postgres://db:notaport/instant", dataDirectory: data)
        }
        #expect(throws: StorageError.self) {
            try StorageLocation.resolve(databaseURL: "mysql://x", dataDirectory: data)
        }
    }
}
