import Foundation
import PostgresNIO

extension PostgresTransaction {
    func revokeTokens(ids: [String], at time: Date) async throws {
        guard !ids.isEmpty else { return }
        try await execute(
            """
            INSERT INTO revoked_tokens (jti, revoked_at)
            SELECT DISTINCT jti, \(time.timeIntervalSince1970)::double precision FROM unnest(\(ids)) AS jti
            ON CONFLICT (jti) DO NOTHING
            """,
            "revoking \(ids.count) token ids"
        )
    }

    func isTokenRevoked(id: String) async throws -> Bool {
        try await !rows("SELECT 1 FROM revoked_tokens WHERE jti = \(id)", "looking up a token revocation").isEmpty
    }
}
