import Foundation
import GRDB
import Testing

@testable import Instant

@Suite("Local store durability", .timeLimit(.minutes(10)))
struct LocalStoreDurabilityTests {
    /// A local change is on the disk when `add` returns, even after a power loss: the store's
    /// writer flushes the log on every commit (`synchronous = FULL`, 2), where the pool, turning WAL
    /// mode on, would flush it only at checkpoints (NORMAL, 1).
    @Test func everyCommitOfTheStoreIsFlushedToTheDisk() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try LocalStore(directory: directory)
        let (journal, synchronous) = try store.pool.writeWithoutTransaction { db in
            (
                try String.fetchOne(db, sql: "PRAGMA journal_mode"),
                try Int.fetchOne(db, sql: "PRAGMA synchronous")
            )
        }
        #expect(journal == "wal")
        #expect(synchronous == 2, "the writer's synchronous setting")
    }
}
