import Foundation

/// Runs long synchronous work (decoding a decompression bomb, compressing a large fixture) on a
/// thread of its own and waits for it without holding one of Swift's few cooperative threads, which
/// the other tests of the process, and the servers they start, need meanwhile.
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.stackSize = 16 << 20
        thread.start()
    }
}

/// Runs long synchronous work that cannot fail on a thread of its own (see the throwing variant).
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: work()) }
        thread.stackSize = 16 << 20
        thread.start()
    }
}

/// A task executor whose jobs run on threads of its own, outside Swift's cooperative pool.
///
/// Swift Testing runs a process's tests on the cooperative pool, one thread per core. A test
/// that reads every file of the corpus holds its thread for seconds at a time; two of them on two
/// cores hold the whole pool, and the tests beside them (the servers they start, their clients,
/// their timeouts) wait until they let go, tens of seconds in a full run. Tests whose work is long
/// and synchronous run on this executor instead
/// (`withTaskExecutorPreference(HeavyWorkExecutor.shared)`): the system shares the cores between
/// its threads and the pool's, and the pool stays free for the others.
public final class HeavyWorkExecutor: TaskExecutor {
    /// The executor of the process, with as many threads as the machine has cores.
    public static let shared = HeavyWorkExecutor(threads: ProcessInfo.processInfo.activeProcessorCount)

    private let queue = JobQueue()
    private let members = Members()

    /// Starts `threads` threads (at least one) that live as long as the process, each with a stack
    /// of 16 MiB as ``onOwnThread(_:)``'s: a debug build's recursive descent into a deep file needs
    /// more than the default.
    private init(threads: Int) {
        for index in 0..<max(1, threads) {
            let started = DispatchSemaphore(value: 0)
            let thread = Thread { [queue, members] in
                members.add(pthread_self())
                started.signal()
                while true { queue.take().runSynchronously(on: self.asUnownedTaskExecutor()) }
            }
            thread.stackSize = 16 << 20
            thread.start()
            started.wait()
            // Named for debuggers and profilers once started: on Linux, Foundation names a thread
            // only when its start has returned, which a name set from inside the thread can precede.
            thread.name = "heavy-test-\(index)"
        }
    }

    /// Whether the calling code runs on one of the executor's threads.
    public var runsTheCurrentThread: Bool { members.contains(pthread_self()) }

    public func enqueue(_ job: consuming ExecutorJob) {
        queue.put(UnownedJob(job))
    }

    /// The executor's threads, each added by itself before it takes a job.
    private final class Members: @unchecked Sendable {
        private let lock = NSLock()
        private var threads: [pthread_t] = []

        func add(_ thread: pthread_t) {
            lock.withLock { threads.append(thread) }
        }

        func contains(_ thread: pthread_t) -> Bool {
            lock.withLock { threads.contains { pthread_equal($0, thread) != 0 } }
        }
    }

    /// The jobs waiting for a thread, first come first served.
    private final class JobQueue: @unchecked Sendable {
        private let condition = NSCondition()
        private var jobs: [UnownedJob] = []
        private var next = 0

        func put(_ job: UnownedJob) {
            condition.lock()
            jobs.append(job)
            condition.unlock()
            condition.signal()
        }

        func take() -> UnownedJob {
            condition.lock()
            defer { condition.unlock() }
            while next == jobs.count { condition.wait() }
            let job = jobs[next]
            next += 1
            if next == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                next = 0
            }
            return job
        }
    }
}
