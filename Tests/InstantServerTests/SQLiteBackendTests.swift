import Foundation
import GRDB
import Testing

@testable import InstantServer

@Suite("SQLite backend", .timeLimit(.minutes(10)))
struct SQLiteBackendTests {
    /// A database of the schema before client identities keeps its clients' last push ids, under the
    /// anonymous user scope.
    @Test func exactlyOnceStateSurvivesTheClientIdentityMigration() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("instant.sqlite").path
        let queue = try DatabaseQueue(path: path)
        try SQLiteBackend.migrator.migrate(queue, upTo: "v2-comment-threads")
        try await queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO documents (id, sha256, byte_size, pages, password_protected, created_at)
                    VALUES ('d', 'x', 1, '[]', 0, 0);
                    INSERT INTO layers (document_id, name, revision) VALUES ('d', '', 4);
                    INSERT INTO client_pushes (document_id, layer, client_id, push_id, revision)
                    VALUES ('d', '', 'client-1', 9, 4);
                    """)
        }
        try queue.close()
        let storage = try InstantStorage.sqlite(
            databasePath: path, pdfDirectory: directory.url.appendingPathComponent("pdfs"))
        let client = ClientIdentity(userID: nil, clientID: "client-1")
        #expect(try await storage.lastPushID(documentID: "d", layer: "", client: client) == 9)
        #expect(
            try await storage.lastPushID(
                documentID: "d", layer: "", client: ClientIdentity(userID: "alice", clientID: "client-1")) == nil)
    }

    /// A transaction's code runs on the thread of its connection between its statements, so a
    /// transaction of many statements does not switch threads per statement; a failing body rolls
    /// back.
    @Test func aTransactionsCodeRunsOnItsConnectionsThread() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let backend = try SQLiteBackend(path: directory.url.appendingPathComponent("instant.sqlite").path)
        let threads = try await backend.write { transaction in
            let sqlite = try #require(transaction as? SQLiteTransaction)
            var threads: [String] = []
            for _ in 0..<5 {
                threads.append(try await sqlite.run { _ in Self.currentThread() })
                threads.append(Self.currentThread())
            }
            return threads
        }
        #expect(Set(threads).count == 1, "statements and the code between them on one thread: \(threads)")

        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await backend.write { transaction in
                let sqlite = try #require(transaction as? SQLiteTransaction)
                try await sqlite.run { db in try db.execute(sql: "CREATE TABLE scratch (x)") }
                throw Refused()
            }
        }
        let exists = try await backend.read { transaction in
            try await (transaction as? SQLiteTransaction)?.run { db in try db.tableExists("scratch") }
        }
        #expect(exists == false, "the failed transaction rolled back")
    }

    private static func currentThread() -> String { "\(pthread_self())" }
}
