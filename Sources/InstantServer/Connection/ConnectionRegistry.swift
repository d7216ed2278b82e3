import Logging
import NIOConcurrencyHelpers
import NIOCore

/// The open connections of a server, kept below ``maxConnections``.
///
/// When a connection opens at the limit, the connection that has waited longest for a request
/// (an idle keep-alive connection, or one still sending its head) is closed to make room: waiting
/// connections cost a descriptor and serve no one, and a client whose idle connection is closed
/// simply opens a new one. Connections that are answering a request (a long-poll, an upload, an
/// export) or that became WebSockets are never closed for it; when every connection is one of
/// those, the new connection is refused. So a flood of idle or slow connections cannot keep
/// `/healthcheck` or any honest client out.
///
/// Connections register from their event loops; the registry is shared by all of them.
final class ConnectionRegistry: Sendable {
    /// The most connections open at once.
    let maxConnections: Int
    private let logger: Logger
    private let state = NIOLockedValueBox(State())

    /// How often the registry reports, at most, that it closed or refused connections.
    private static let reportInterval = TimeAmount.seconds(10)

    private struct Entry {
        let connection: NIOLoopBound<ConnectionGuard>
        /// The ticket of the connection's current wait for a request; `nil` while it is busy.
        var ticket: UInt64?
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        /// Waits in the order they began; a wait whose ticket is no longer its connection's is
        /// over and skipped.
        var waits: [(id: ObjectIdentifier, ticket: UInt64)] = []
        var firstWait = 0
        var nextTicket: UInt64 = 0
        var evictedSinceReport = 0
        var refusedSinceReport = 0
        var lastReport: NIODeadline?

        /// Starts a wait for `id`.
        mutating func beginWait(_ id: ObjectIdentifier) {
            nextTicket += 1
            entries[id]?.ticket = nextTicket
            waits.append((id, nextTicket))
            // Drop the waits that are over once they are most of the list.
            if waits.count - firstWait > 2 * entries.count + 64 {
                waits = waits[firstWait...].filter { entries[$0.id]?.ticket == $0.ticket }
                firstWait = 0
            }
        }

        /// Removes and returns the connection that has waited longest, if any waits.
        mutating func removeLongestWaiting() -> Entry? {
            while firstWait < waits.count {
                let wait = waits[firstWait]
                firstWait += 1
                if let entry = entries[wait.id], entry.ticket == wait.ticket {
                    entries[wait.id] = nil
                    return entry
                }
            }
            waits.removeAll(keepingCapacity: true)
            firstWait = 0
            return nil
        }

        /// A summary of the connections closed or refused since the last one, if it is time for it.
        mutating func report(now: NIODeadline) -> String? {
            guard evictedSinceReport + refusedSinceReport > 0,
                lastReport.map({ now - $0 >= ConnectionRegistry.reportInterval }) ?? true
            else { return nil }
            defer {
                evictedSinceReport = 0
                refusedSinceReport = 0
                lastReport = now
            }
            return "since the last report, \(evictedSinceReport) waiting connection(s) were closed and "
                + "\(refusedSinceReport) new one(s) refused"
        }
    }

    /// A registry of at most `maxConnections` connections.
    init(maxConnections: Int, logger: Logger) {
        self.maxConnections = max(1, maxConnections)
        self.logger = logger
    }

    /// Registers a new connection. At the limit, the connection that has waited longest for a
    /// request is closed to make room.
    /// - Returns: `false` when the limit is reached and no connection waits: the new one must close.
    func admit(_ id: ObjectIdentifier, guard connection: NIOLoopBound<ConnectionGuard>, waiting: Bool) -> Bool {
        let (admitted, evicted, report) = state.withLockedValue { state -> (Bool, Entry?, String?) in
            var evicted: Entry?
            if state.entries.count >= maxConnections {
                evicted = state.removeLongestWaiting()
                if evicted == nil {
                    state.refusedSinceReport += 1
                    return (false, nil, state.report(now: .now()))
                }
                state.evictedSinceReport += 1
            }
            state.entries[id] = Entry(connection: connection, ticket: nil)
            if waiting { state.beginWait(id) }
            return (true, evicted, state.report(now: .now()))
        }
        if let evicted {
            let connection = evicted.connection
            connection.eventLoop.execute { connection.value.evict() }
        }
        if let report {
            let message =
                "The connection limit of \(maxConnections) was reached: \(report). Raise --max-connections "
                + "(MAX_CONNECTIONS) and the descriptor limit (ulimit -n) if clients need more."
            logger.warning("\(message)")
        }
        return admitted
    }

    /// Records that a connection now waits for a request (`true`) or is busy answering one or
    /// is a WebSocket (`false`).
    func setWaiting(_ id: ObjectIdentifier, _ waiting: Bool) {
        state.withLockedValue { state in
            guard state.entries[id] != nil else { return }
            if waiting {
                state.beginWait(id)
            } else {
                state.entries[id]?.ticket = nil
            }
        }
    }

    /// Forgets a closed connection.
    func remove(_ id: ObjectIdentifier) {
        state.withLockedValue { state in state.entries[id] = nil }
    }
}
