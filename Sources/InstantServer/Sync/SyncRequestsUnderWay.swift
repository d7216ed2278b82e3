import Foundation
import Synchronization

/// The sync requests being applied that no connection waits for: those a connection answers ahead
/// of the router (``SyncRouteHandler``) and those sent on listening WebSockets. The server's
/// shutdown waits for them before its storage stops (``ClientWorkShutdown``).
///
/// The router's requests keep their connection open until their handler returns, and the server
/// waits for its connections when it stops. These run in tasks of their own: a push whose client
/// closed its connection or socket goes on to its commit, which the storage must still serve.
final class SyncRequestsUnderWay: Sendable {
    private struct State {
        var running = 0
        var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    /// Notes a request that starts; ``ended()`` must follow. Called before its task is made, so
    /// that a shutdown in between waits for it.
    func started() {
        state.withLock { $0.running += 1 }
    }

    /// Notes a request that ended; once none runs, what waits for them goes on.
    func ended() {
        let waiters = state.withLock { state in
            state.running -= 1
            guard state.running == 0 else { return [CheckedContinuation<Void, Never>]() }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// How many requests run.
    var running: Int { state.withLock { $0.running } }

    /// Whether something waits for the requests to end.
    var isAwaited: Bool { state.withLock { !$0.waiters.isEmpty } }

    /// Returns once no request runs, or after `limit`.
    func untilNone(waitingAtMost limit: Duration) async {
        guard running > 0 else { return }
        let waiter = UUID()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    // Once the time ran out (the task is cancelled), the waiter no longer waits.
                    let waits = self.state.withLock { state in
                        guard state.running > 0, !Task.isCancelled else { return false }
                        state.waiters[waiter] = continuation
                        return true
                    }
                    if !waits { continuation.resume() }
                }
            }
            group.addTask { try? await Task.sleep(for: limit) }
            await group.next()
            group.cancelAll()
            state.withLock { $0.waiters.removeValue(forKey: waiter) }?.resume()
        }
    }
}
