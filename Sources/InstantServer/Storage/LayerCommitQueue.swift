import Foundation
import Synchronization

/// Group commit: the commits to one layer that arrive while a transaction on it is running wait
/// for it, then all run in the next transaction, one after the other, each with its own outcome.
/// The next transaction takes them once it has the layer's lock, so those that arrive while it
/// waits for the lock join it too.
///
/// Every commit still sees the layer as the ones before it left it and takes its own revision;
/// what the group shares is the transaction, so one durable write (one `fsync`) serves all of
/// them. A commit that fails on its own (a condition, an out-of-range push id) writes nothing and
/// fails alone; when the transaction itself fails, every commit of the group fails with its error
/// and writes nothing (a client retries; pushes apply exactly once).
final class LayerCommitQueue: Sendable {
    /// One commit waiting for a transaction.
    struct Job: Sendable {
        /// The push the commit applies, whose client's last push id the group reads beforehand.
        var push: ClientPush?
        /// The records its decision reads, which the group reads beforehand for all its commits.
        var reading: [String]
        /// The changes its answer carries, which the group reads once for all its answers; `nil`
        /// when it is not answered in the transaction.
        var answer: AnsweredChanges?
        /// Runs the commit inside the group's transaction on the layer as the commits before it
        /// left it (and updates it); returns how to answer once every commit of the group is
        /// written. It throws only what must fail the whole group (the database failed).
        var run: @Sendable (any StorageTransaction, inout GroupCommit) async throws -> Answering
        /// Delivers the transaction's failure instead.
        var fail: @Sendable (any Error) -> Void
    }

    /// Answers a commit from a reader of the layer after its group's commits, in the group's
    /// transaction (`nil` when it is not answered there); returns how to deliver its outcome once
    /// the transaction committed.
    typealias Answering = @Sendable (LayerReader?) async throws -> @Sendable () -> Void

    struct LayerKey: Hashable, Sendable {
        var documentID: String
        var layer: String
    }

    private struct Queue {
        var waiting: [Job] = []
        var isRunning = false
    }

    private let queues = Mutex<[LayerKey: Queue]>([:])

    /// Runs a group's transaction: locks the layer, takes the group's jobs (`take`, called once
    /// the layer is locked; later calls return the same jobs), runs them in order, calls `written`
    /// once their statements are done (before the commit), commits; returns how to deliver their
    /// outcomes. It may call `written` more than once, or not at all when it throws.
    typealias Transaction =
        @Sendable (
            _ key: LayerKey, _ take: @escaping @Sendable () -> [Job], _ written: @escaping @Sendable () -> Void
        ) async throws -> Delivery

    /// Delivers a committed group's outcomes and reports the group.
    typealias Delivery = @Sendable () async -> Void

    /// Adds a commit to the layer's queue; the first commit of an idle layer starts its group at once.
    /// The layer's group transactions run in tasks that prefer `executor` (the backend's
    /// ``StorageBackend/commitExecutor``), or else the event loop of the commit that starts them.
    ///
    /// Without a preference, a task that the database's thread wakes would go to Swift's global
    /// executor, which picks the server's next event loop in turn; the loops accept connections in
    /// that same turn, so the wake-ups of every commit decided which loop each new connection got
    /// (in the benchmark all ten writers' connections sometimes landed on one loop, and the other
    /// was left idle).
    func submit(
        _ job: Job, to key: LayerKey, on executor: (any TaskExecutor)? = nil, running transaction: @escaping Transaction
    ) {
        let starts = queues.withLock { queues in
            queues[key, default: Queue()].waiting.append(job)
            guard queues[key]?.isRunning == false else { return false }
            queues[key]?.isRunning = true
            return true
        }
        guard starts else { return }
        let executor = executor ?? EventLoopTaskExecutor.current
        Task(executorPreference: executor) { await self.drain(key, executor, transaction) }
    }

    /// What this node knows of a layer from its last group on it.
    struct LastGroup: Sendable {
        /// The revision the group left.
        var revision: Int64
        /// Whether the group found the layer as the group before it here had left it: no other
        /// node wrote it in between.
        var foundAsLeft: Bool
        /// How many of the layer's next groups here lock it rather than try without the lock: a
        /// group whose write found that another writer had changed the layer since it read it
        /// (two nodes writing the layer at the same time) makes the next
        /// ``LayerCommitQueue/lockedGroupsAfterRefusal`` lock it, each counting one down.
        var locksNext = 0
        /// What the group read and wrote of the layer, for the next group to read less.
        var memory: LayerMemory? = nil
        /// When the group was noted (the storage's clock).
        var notedAt: Date
    }

    /// The last groups (``noteLastGroup(_:on:)``) and the bytes of their memories.
    private struct LastGroups {
        var groups: [LayerKey: LastGroup] = [:]
        var memoryBytes = 0
    }

    /// The last group on each layer (``noteLastGroup(_:on:)``), for at most ``rememberedLayers``
    /// layers, with memories of at most ``rememberedBytes`` in all.
    private let lastGroups = Mutex(LastGroups())

    /// How many layers' last groups ``lastGroup(on:at:)`` remembers; once full, it forgets them all.
    static let rememberedLayers = 4_096
    /// How many bytes the memories of the last groups (``LayerMemory``) take at most in all; a
    /// memory that would go beyond makes the others forgotten (their layers' next groups read from
    /// the database, and remember again).
    static let rememberedBytes = 64 << 20

    /// How many groups on a layer lock it after a group that did not lock it found another
    /// writer's changes at its write: where two nodes write a layer at the same time, most groups
    /// that do not lock it would write nothing and run again, locked. The group after them tries
    /// without the lock again.
    static let lockedGroupsAfterRefusal = 16

    /// How long a last group's memory (``LayerMemory``) is taken by the next group on its layer.
    ///
    /// The memory helps a layer that is written continuously; a group after a pause reads what it
    /// needs from the database, which costs one read. The bound also makes a memory's version safe
    /// on PostgreSQL, where it is a transaction id (`xmin`), which repeats only after 2³²
    /// transactions: far more than any database commits in a minute.
    static let memoryLifetime: TimeInterval = 60

    /// The layer's last group here, `nil` if unknown (none here yet, or forgotten); without its
    /// memory when that was noted more than ``memoryLifetime`` before or after `now` (a clock
    /// set back does not make a memory live longer).
    func lastGroup(on key: LayerKey, at now: Date) -> LastGroup? {
        guard var group = lastGroups.withLock({ $0.groups[key] }) else { return nil }
        if abs(now.timeIntervalSince(group.notedAt)) > Self.memoryLifetime { group.memory = nil }
        return group
    }

    /// Notes the layer's last group, for the next (``lastGroup(on:at:)``).
    func noteLastGroup(_ group: LastGroup, on key: LayerKey) {
        lastGroups.withLock { last in
            if last.groups[key] == nil, last.groups.count >= Self.rememberedLayers {
                last.groups.removeAll(keepingCapacity: true)
                last.memoryBytes = 0
            }
            last.memoryBytes -= last.groups[key]?.memory?.byteCount ?? 0
            let bytes = group.memory?.byteCount ?? 0
            if last.memoryBytes + bytes > Self.rememberedBytes {
                for other in last.groups.keys { last.groups[other]?.memory = nil }
                last.memoryBytes = 0
            }
            last.groups[key] = group
            last.memoryBytes += bytes
        }
    }

    /// How many commits wait for the layer's next group transaction.
    func waitingCount(on key: LayerKey) -> Int {
        queues.withLock { $0[key]?.waiting.count ?? 0 }
    }

    /// Runs groups until nothing waits on the layer.
    ///
    /// The groups overlap: once a group's statements are written, the next group starts its
    /// transaction, which the database holds until the one before committed (SQLite has one
    /// writer; on PostgreSQL the layer's row lock waits), so that the next group is ready to run
    /// the moment the one before ends instead of after its outcomes went out; it takes its jobs
    /// then. Groups are delivered and reported one after the other, in order.
    private func drain(_ key: LayerKey, _ executor: (any TaskExecutor)?, _ transaction: @escaping Transaction) async {
        var delivering: Task<Void, Never>?
        while true {
            if !hasWaiting(on: key, endingIfNot: false) {
                // The layer's last report goes out before another drain of it may start.
                await delivering?.value
                delivering = nil
                if !hasWaiting(on: key, endingIfNot: true) { return }
            }
            let group = GroupJobs(queue: self, key: key)
            let written = Signal()
            let previous = delivering
            delivering = Task(executorPreference: executor) {
                let delivery: Delivery
                do {
                    delivery = try await transaction(key, group.take, written.fire)
                } catch {
                    // Jobs not taken yet were waiting for this transaction: they fail with it (taken
                    // before the next group may start and take them).
                    let failed = group.take()
                    written.fire()
                    await previous?.value
                    for job in failed { job.fail(error) }
                    return
                }
                written.fire()
                await previous?.value
                await delivery()
            }
            await written.wait()
        }
    }

    /// Whether commits wait on the layer; when none do and `endingIfNot`, the layer's queue ends
    /// (the next commit starts a new drain).
    private func hasWaiting(on key: LayerKey, endingIfNot: Bool) -> Bool {
        queues.withLock { queues in
            let waiting = !(queues[key]?.waiting.isEmpty ?? true)
            if !waiting && endingIfNot { queues[key] = nil }
            return waiting
        }
    }

    /// The commits waiting on the layer, which leave the queue.
    fileprivate func takeWaiting(on key: LayerKey) -> [Job] {
        queues.withLock { queues in
            defer { queues[key]?.waiting = [] }
            return queues[key]?.waiting ?? []
        }
    }
}

/// The jobs of one group: those waiting on the layer when the group first asks for them.
private final class GroupJobs: Sendable {
    private let queue: LayerCommitQueue
    private let key: LayerCommitQueue.LayerKey
    private let taken = Mutex<[LayerCommitQueue.Job]?>(nil)

    init(queue: LayerCommitQueue, key: LayerCommitQueue.LayerKey) {
        self.queue = queue
        self.key = key
    }

    func take() -> [LayerCommitQueue.Job] {
        taken.withLock { taken in
            if let taken { return taken }
            let jobs = queue.takeWaiting(on: key)
            taken = jobs
            return jobs
        }
    }
}

/// Fired once: a waiting task goes on once it has been (at once if it was before).
private final class Signal: Sendable {
    private let state = Mutex<(fired: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func fire() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.fired else { return nil }
            state.fired = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let fired = state.withLock { state in
                if !state.fired { state.waiter = continuation }
                return state.fired
            }
            if fired { continuation.resume() }
        }
    }
}
