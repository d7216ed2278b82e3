import Foundation
import InstantServer
import Testing

@testable import Instant

/// The descriptor performs its state machine's actions through one serial executor, so they
/// happen in the order the machine returned them, whichever threads deliver its events.
@Suite("Actions run in the machine's order", .timeLimit(.minutes(10)))
struct SerialActionExecutorTests {
    /// What a test's actions did, in order.
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [String] = []
        func append(_ entry: String) { lock.withLock { entries.append(entry) } }
        var all: [String] { lock.withLock { entries } }
    }

    @Test func actionsEnqueuedWhileAnotherThreadPerformsRunAfterItsActionsAndTheCallerWaitsForThem() async throws {
        let executor = SerialActionExecutor<String>()
        let log = Log()
        let firstStarted = DispatchSemaphore(value: 0)
        let releaseFirst = DispatchSemaphore(value: 0)
        let perform: @Sendable (String) -> Void = { action in
            log.append(action)
            if action == "a1" {
                firstStarted.signal()
                releaseFirst.wait()
            }
        }
        let first = Thread {
            executor.run(through: executor.enqueue(["a1", "a2"]), perform)
        }
        first.start()
        firstStarted.wait()
        // The first thread is inside a1: the second's action queues behind a2.
        let ticket = executor.enqueue(["b1"])
        let secondReturned = DispatchSemaphore(value: 0)
        let seenBySecond = Log()
        let second = Thread {
            executor.run(through: ticket, perform)
            for entry in log.all { seenBySecond.append(entry) }
            secondReturned.signal()
        }
        second.start()
        releaseFirst.signal()
        secondReturned.wait()
        #expect(log.all == ["a1", "a2", "b1"])
        #expect(seenBySecond.all == ["a1", "a2", "b1"], "the second caller returns once its action ran")
    }

    @Test func anActionThatFeedsTheMachineAgainQueuesBehindTheActionsAlreadyQueued() {
        let executor = SerialActionExecutor<String>()
        let log = Log()
        func perform(_ action: String) {
            log.append(action)
            if action == "x" {
                // As when an action's outcome is known at once and is delivered on this thread.
                executor.run(through: executor.enqueue(["y"]), perform)
                log.append("x returned")
            }
        }
        executor.run(through: executor.enqueue(["x", "z"]), perform)
        #expect(log.all == ["x", "x returned", "z", "y"])
    }

    @Test func manyThreadsEachSeeTheirActionsPerformedExactlyOnceInEnqueueOrder() async {
        let executor = SerialActionExecutor<Int>()
        let log = Log()
        let order = NSLock()
        let expected = Log()
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<8 {
                group.addTask {
                    for step in 0..<200 {
                        let action = thread * 1000 + step
                        let ticket = order.withLock {
                            expected.append(String(action))
                            return executor.enqueue([action])
                        }
                        executor.run(through: ticket) { log.append(String($0)) }
                        #expect(log.all.contains(String(action)))
                    }
                }
            }
        }
        #expect(log.all == expected.all)
    }

    /// Calls of `sync()` and `stopSyncing(cancelCurrentRequest: true)` from many threads at once:
    /// every cycle that begins is announced as ended exactly once before the next begins. (Before
    /// the executor, a thread could post its cycle's start before another thread posted the end
    /// of the cycle it had cancelled.)
    @Test func concurrentCallsPostEachCyclesBeginningAndEndInOrder() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let client = try server.client("a")
        let jwt = try await server.token()
        let descriptor = try await server.downloaded(client, jwt: jwt)
        try descriptor.setDelayForSyncingLocalChanges(.instantSyncingLocalChangesDisabled)
        let posted = Log()
        let center = NotificationCenter.default
        let names: [Notification.Name] = [.instantDidBeginSyncing, .instantDidFinishSyncing, .instantDidFailSyncing]
        let observers = names.map { name in
            center.addObserver(forName: name, object: descriptor, queue: nil) { posted.append($0.name.rawValue) }
        }
        defer { for observer in observers { center.removeObserver(observer) } }

        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<6 {
                group.addTask {
                    for step in 0..<150 {
                        if (thread + step) % 2 == 0 {
                            descriptor.sync()
                        } else {
                            descriptor.stopSyncing(cancelCurrentRequest: true)
                        }
                    }
                }
            }
        }
        try await descriptor.syncAndWait()
        await server.stop()

        let begin = Notification.Name.instantDidBeginSyncing.rawValue
        var open = false
        var violations: [String] = []
        for (index, name) in posted.all.enumerated() {
            if name == begin {
                if open { violations.append("#\(index): a cycle began before the previous one ended") }
                open = true
            } else {
                if !open { violations.append("#\(index): \(name) without a cycle") }
                open = false
            }
        }
        #expect(posted.all.count > 10, "the calls started cycles")
        #expect(violations.isEmpty, "\(violations.prefix(5))")
    }
}
