import Foundation
import Synchronization

/// What this node knows of token revocations, so that a client's requests do not each cost a read
/// of the database: every request with a token that has an id (`jti`) asks whether it was revoked.
///
/// - A token id known revoked stays so (revocations are never taken back).
/// - A token id read as not revoked is taken as such for ``recheckInterval`` from the moment its
///   read started, then read again.
/// - A revocation through this node is known at once (``InstantStorage/revokeTokens(ids:)``); one
///   through another node as soon as its notification arrives (``InstantStorage/noteRevoked(_:)``),
///   and within ``recheckInterval`` when the notification is lost (the channel between the nodes
///   was down).
///
/// Bounded: past ``maximumIDs`` ids of either kind, that kind is forgotten and read again.
final class TokenRevocations: Sendable {
    /// How long a token id read as not revoked is taken as such.
    static let recheckInterval: TimeInterval = 1
    /// How many revoked ids, and how many ids read as not revoked, are kept at most.
    static let maximumIDs = 100_000

    private struct Known {
        var revoked: Set<String> = []
        /// When the read that found each id not revoked started.
        var notRevoked: [String: Date] = [:]
    }

    private let known = Mutex(Known())

    /// Whether the id was revoked, as known at `now`; `nil` when it has to be read.
    func isRevoked(_ id: String, at now: Date) -> Bool? {
        known.withLock { known in
            if known.revoked.contains(id) { return true }
            guard let readAt = known.notRevoked[id] else { return nil }
            // Nor does a clock set back make a read count for longer.
            guard abs(now.timeIntervalSince(readAt)) < Self.recheckInterval else {
                known.notRevoked[id] = nil
                return nil
            }
            return false
        }
    }

    /// Notes what a read that started at `readAt` found.
    func noteRead(_ id: String, revoked: Bool, startedAt readAt: Date) {
        if revoked { return noteRevoked([id]) }
        known.withLock { known in
            // A revocation noted while the read ran is newer than what the read found.
            guard !known.revoked.contains(id) else { return }
            if known.notRevoked[id] == nil, known.notRevoked.count >= Self.maximumIDs {
                known.notRevoked.removeAll(keepingCapacity: true)
            }
            known.notRevoked[id] = readAt
        }
    }

    /// Notes revoked ids.
    func noteRevoked(_ ids: [String]) {
        known.withLock { known in
            for id in ids {
                known.notRevoked[id] = nil
                if known.revoked.count >= Self.maximumIDs { known.revoked.removeAll(keepingCapacity: true) }
                known.revoked.insert(id)
            }
        }
    }
}
