import Foundation
import Synchronization

/// Group commit: the commits to one layer that arrive while a transaction on it is running wait
/// for it, then all run in the next transaction, one after the other, each with its own outcome.
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
        /// Given the layer's revision when the group locked it, the revision its answer asks the
        /// changes after, or `nil` when it is not answered in the transaction: the group reads them
        /// once for all its answers.
        var answerReadsChangesAfter: @Sendable (Int64) -> Int64?
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

    /// Runs a group's transaction: locks the layer, runs `jobs` in order, commits, then delivers
    /// their outcomes.
    typealias Transaction = @Sendable (_ key: LayerKey, _ jobs: [Job]) async throws -> Void

    /// Adds a commit to the layer's queue; the first commit of an idle layer starts its group at once.
    func submit(_ job: Job, to key: LayerKey, running transaction: @escaping Transaction) {
        let starts = queues.withLock { queues in
            queues[key, default: Queue()].waiting.append(job)
            guard queues[key]?.isRunning == false else { return false }
            queues[key]?.isRunning = true
            return true
        }
        guard starts else { return }
        Task { await drain(key, transaction) }
    }

    /// How many commits wait for the layer's next group transaction.
    func waitingCount(on key: LayerKey) -> Int {
        queues.withLock { $0[key]?.waiting.count ?? 0 }
    }

    /// Runs groups until nothing waits on the layer.
    private func drain(_ key: LayerKey, _ transaction: Transaction) async {
        while true {
            let group = queues.withLock { queues -> [Job] in
                let waiting = queues[key]?.waiting ?? []
                if waiting.isEmpty {
                    queues[key] = nil
                } else {
                    queues[key]?.waiting = []
                }
                return waiting
            }
            guard !group.isEmpty else { return }
            do {
                try await transaction(key, group)
            } catch {
                for job in group { job.fail(error) }
            }
        }
    }
}
