import Foundation
import GRDB
import InstantJSON
import InstantServer
import InstantTesting
import Testing

@testable import Instant

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Local stores written by older versions", .timeLimit(.minutes(10)))
struct StoreMigrationTests {
    /// Writes a store as the first version of the SDK did: schema v1 only, one layer of one
    /// document with the given records (`pending` ones are local edits not yet pushed).
    static func writeOldStore(
        at directory: URL, upTo migration: String, documentID: String, jwt: String,
        records: [(id: String, content: String, pending: Bool)], configure: String? = nil
    ) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: directory.appendingPathComponent(LocalStore.databaseFile).path)
        try LocalStore.migrator.migrate(queue, upTo: migration)
        try queue.write { db in
            try db.execute(sql: "INSERT INTO meta (key, value) VALUES ('client_id', 'old-client')")
            try db.execute(
                sql: "INSERT INTO layers (document_id, name, user_id, jwt, revision) VALUES (?, '', 'alice', ?, 0)",
                arguments: [documentID, jwt])
            for record in records {
                if record.pending {
                    try db.execute(
                        sql: """
                            INSERT INTO records (document_id, layer, id, kind, pending, local_version, local_content)
                            VALUES (?, '', ?, 'annotation', 1, 1, ?)
                            """,
                        arguments: [documentID, record.id, Data(record.content.utf8)])
                } else {
                    try db.execute(
                        sql: """
                            INSERT INTO records (document_id, layer, id, kind, server_revision, server_content)
                            VALUES (?, '', ?, 'annotation', 0, ?)
                            """,
                        arguments: [documentID, record.id, Data(record.content.utf8)])
                }
            }
            if let configure { try db.execute(sql: configure) }
        }
    }

    @Test func aStoreWithFormatOneRecordsNeedsAContentMigration() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let jwt = try await server.token()
        let directory = server.clientDirectory("old")
        let old =
            #"{"v":1,"type":"pspdfkit/note","pageIndex":0,"bbox":[1,2,3,4],"text":"written long ago","icon":"comment"}"#
        try Self.writeOldStore(
            at: directory, upTo: "v1", documentID: server.documentID, jwt: jwt,
            records: [(id: "n1", content: old, pending: false)])

        let client = try InstantClient(serverURL: server.server.baseURL, dataDirectory: directory)
        let descriptor = try client.documentDescriptor(forJWT: jwt)
        #expect(descriptor.documentState == .unknown, "determined when a document is first obtained")
        _ = descriptor.editableDocument
        #expect(descriptor.documentState == .needsContentMigration)
        let storedTokens = try await DatabaseQueue(
            path: directory.appendingPathComponent(LocalStore.databaseFile).path
        ).read { db in try String.fetchAll(db, sql: "SELECT jwt FROM layers WHERE jwt IS NOT NULL") }
        #expect(storedTokens.isEmpty, "the token an older version stored is erased")
        #expect(descriptor.isDownloaded)
        #expect(throws: InstantError.self) { try descriptor.editableDocument.annotations() }

        let progress = try descriptor.attemptContentMigration()
        #expect(try await eventually { descriptor.documentState == .clean })
        #expect(progress.fractionCompleted == 1)
        let migrated = try #require(try descriptor.editableDocument.annotation(withIdentifier: "n1"))
        #expect(migrated["v"] == .integer(2))
        #expect(migrated["text"] == ["format": "plain", "value": "written long ago"])
        do {
            _ = try descriptor.attemptContentMigration()
            Issue.record("a second migration must be refused")
        } catch let error as InstantError {
            #expect(error.code == .migrationNotNeeded)
        }
        await server.stop()
    }

    @Test func aStoreFromBeforeCollaborationPermissionsIsResetAfterPushingItsChanges() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let jwt = try await server.token()
        // The server has a record the old store never saw.
        var request = URLRequest(
            url: server.server.baseURL.appendingPathComponent("api/documents/\(server.documentID)/annotations"))
        request.httpMethod = "POST"
        request.setValue("Token token=\"\(server.server.apiAuthToken)\"", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = JSONValue.object(["id": "on-server", "content": try note(text: "server").jsonValue])
            .serialized()
        _ = try await URLSession.shared.data(for: request)

        let directory = server.clientDirectory("reset")
        let pending = String(decoding: try note(text: "kept offline").serialized(), as: UTF8.self)
        try Self.writeOldStore(
            at: directory, upTo: "v2-content-versions", documentID: server.documentID, jwt: jwt,
            records: [(id: "local", content: pending, pending: true)],
            configure: "UPDATE layers SET needs_refetch = 1, content_version = 2")

        let client = try InstantClient(serverURL: server.server.baseURL, dataDirectory: directory)
        let descriptor = try client.documentDescriptor(forJWT: jwt)
        // The reset starts once a document is asked for and asks for a token (none is stored);
        // with it, the pending change goes out, then everything is fetched again.
        #expect(descriptor.documentState == .unknown)
        _ = descriptor.readOnlyDocument()
        #expect(try await eventually { descriptor.documentState == .needsResetForDatabaseMigration })
        try descriptor.reauthenticate(withJWT: jwt)
        #expect(try await eventually { descriptor.documentState == .clean })
        #expect(try await server.serverAnnotations()["local"] != nil, "the offline change was not lost")
        let ids = try descriptor.editableDocument.annotations().compactMap(\.id)
        #expect(Set(ids) == ["local", "on-server"])
        await server.stop()
    }
}

@Suite("Damaged local stores", .timeLimit(.minutes(10)))
struct DamagedStoreTests {
    @Test func aDamagedLayerMakesItsDescriptorInvalidUntilItsStorageIsRemoved() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let directory = server.clientDirectory("damaged")
        let jwt = try await server.token()
        do {
            let client = try InstantClient(serverURL: server.server.baseURL, dataDirectory: directory)
            let descriptor = try await server.downloaded(client, jwt: jwt)
            try descriptor.setDelayForSyncingLocalChanges(.instantSyncingLocalChangesDisabled)
            try descriptor.editableDocument.add(try note())
        }
        let queue = try DatabaseQueue(path: directory.appendingPathComponent(LocalStore.databaseFile).path)
        try await queue.write { db in
            try db.execute(sql: "UPDATE records SET local_content = ?", arguments: [Data("{not json".utf8)])
        }

        let client = try InstantClient(serverURL: server.server.baseURL, dataDirectory: directory)
        let descriptor = try client.documentDescriptor(forJWT: jwt)
        #expect(descriptor.documentState == .unknown)
        #expect(throws: InstantError.self) { try descriptor.editableDocument.annotations() }
        #expect(descriptor.documentState == .invalid)
        try descriptor.removeLocalStorage()
        #expect(descriptor.documentState == .unknown)
        try descriptor.download(usingJWT: jwt)
        #expect(try await eventually { descriptor.documentState == .clean })
        #expect(try descriptor.editableDocument.annotations().isEmpty)
        await server.stop()
    }
}
