import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// The sync requests being applied that no connection waits for: those a connection answers ahead
/// of the router (``SyncRouteHandler``) and those sent on listening WebSockets. The server's
/// shutdown waits for them before its storage stops (``ClientWorkShutdown``).
///
/// The router's requests keep their connection open until their handler returns, and the server
/// waits for its connections when it stops. These run in tasks of their own: a push whose client
/// closed its connection or socket goes on to its commit, which the storage must still serve.
///
/// It also chooses the event loop where each request's work runs (parsing, checking, planning,
/// writing its answer): the loop of its connection, unless another of the server's loops has fewer
/// requests running. SwiftNIO hands accepted connections to its loops in turn, with the same
/// counter as the tasks it wakes, so that a few busy connections can all land on one loop while
/// another idles: in a profile of `instant-bench sync`'s 100-change pushes on WebSockets, one loop
/// took 1,199 samples and the other 189.
final class SyncRequestsUnderWay: Sendable {
    private struct State {
        var running = 0
        var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
        /// The requests running on each of ``loops``.
        var runningOn: [Int]
    }

    private let state: Mutex<State>
    /// The loops that requests' work may run on, each with its executor.
    private let loops: [(loop: any EventLoop, executor: EventLoopTaskExecutor)]

    /// Where one request's work runs, until it ended.
    struct Work: Sendable {
        /// Its loop's position in ``SyncRequestsUnderWay/loops``, or `nil` for the loop the
        /// request arrived on, when it is not one of them.
        fileprivate let position: Int?
        /// The executor of the loop, or `nil` for the one the request arrived on.
        var executor: EventLoopTaskExecutor? { position.map { loops[$0].executor } }
        /// The loop, or `nil` for the one the request arrived on.
        var loop: (any EventLoop)? { position.map { loops[$0].loop } }
        fileprivate let loops: [(loop: any EventLoop, executor: EventLoopTaskExecutor)]
    }

    /// The loops that requests' work runs on, which the server's connections must run on too
    /// (``buildInstantApplication(configuration:storage:importer:logger:metrics:pdfWork:onServerRunning:)``
    /// gives it to the application): requests from other loops run where they arrived.
    let group: any EventLoopGroup

    /// Requests whose work runs on the loops of `group`.
    init(loops group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.group = group
        loops = group.makeIterator().map { ($0, EventLoopTaskExecutor($0)) }
        state = Mutex(State(runningOn: Array(repeating: 0, count: loops.count)))
    }

    /// Notes a request that starts, which arrived on `loop`, and says where its work runs;
    /// ``ended(_:)`` must follow. Called before its task is made, so that a shutdown in between
    /// waits for it.
    func started(arrivedOn loop: any EventLoop) -> Work {
        let own = loops.firstIndex { $0.loop === loop }
        return state.withLock { state in
            state.running += 1
            guard let own else { return Work(position: nil, loops: loops) }
            // The connection's own loop while no other has fewer requests running: no hop to
            // another thread unless the loops are out of balance.
            var chosen = own
            for position in state.runningOn.indices where state.runningOn[position] < state.runningOn[chosen] {
                chosen = position
            }
            state.runningOn[chosen] += 1
            return Work(position: chosen, loops: loops)
        }
    }

    /// Notes a request that ended; once none runs, what waits for them goes on.
    func ended(_ work: Work) {
        let waiters = state.withLock { state in
            // A request ended twice would leave its loop taking every request after it.
            precondition(state.running > 0, "A sync request ended twice")
            state.running -= 1
            if let position = work.position {
                precondition(state.runningOn[position] > 0, "A sync request ended twice")
                state.runningOn[position] -= 1
            }
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
