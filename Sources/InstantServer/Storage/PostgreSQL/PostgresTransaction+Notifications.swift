import Foundation
import PostgresNIO

extension PostgresTransaction {
    func announce(_ event: StorageEvent) async throws {
        // pg_notify delivers at commit, in commit order, and not at all on rollback.
        try await execute(
            "SELECT pg_notify(\(PostgresBackend.eventChannel), payload) FROM unnest(\(try PostgresBackend.payloads(.committed(event)))) AS payload",
            "announcing a change to the other server nodes"
        )
    }
}
