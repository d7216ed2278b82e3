import Foundation
import InstantTesting
import NIOPosix
import Synchronization
import Testing

@testable import InstantServer

@Suite("Group commit queue", .timeLimit(.minutes(10)))
struct LayerCommitQueueTests {
    struct BrokenTransaction: Error {}

    /// What became of each job, by name.
    final class Outcomes: Sendable {
        let byName = Mutex<[String: String]>([:])

        func note(_ name: String, _ outcome: String) { byName.withLock { $0[name] = outcome } }
        var all: [String: String] { byName.withLock { $0 } }
    }

    /// A job known by its name (carried as the one id it reads).
    static func job(_ name: String, outcomes: Outcomes) -> LayerCommitQueue.Job {
        LayerCommitQueue.Job(
            push: nil, reading: [name], answer: nil,
            run: { _, _ in { _ in {} } },
            fail: { _ in outcomes.note(name, "failed") })
    }

    /// A commit's answer is made in its group's transaction when the layer is at or a little past
    /// the client's revision; a client far behind, or ahead of the layer, is answered after the
    /// commit. A group that has not read the layer yet, expecting it at a revision or later, plans
    /// its read on the answers the layer is not already too far past.
    @Test func anAnswerIsMadeInItsGroupWhenTheLayerIsALittleAhead() {
        let changes = AnsweredChanges(after: 10, withinRevisions: 64)
        #expect(changes.readsChangesAfter(layerAt: 10) == 10)
        #expect(changes.readsChangesAfter(layerAt: 74) == 10)
        #expect(changes.readsChangesAfter(layerAt: 75) == nil, "too far behind")
        #expect(changes.readsChangesAfter(layerAt: 9) == nil, "a revision the layer does not have")
        #expect(changes.readsChangesAfter(layerAtLeast: 3) == 10, "a client ahead of the revision expected")
        #expect(changes.readsChangesAfter(layerAtLeast: 74) == 10)
        #expect(changes.readsChangesAfter(layerAtLeast: 75) == nil)
        let anyDistance = AnsweredChanges(after: .min)
        #expect(anyDistance.readsChangesAfter(layerAt: 5) == nil, "further behind than a revision can say")
        #expect(anyDistance.readsChangesAfter(layerAtLeast: .max) == nil)
        #expect(AnsweredChanges(after: 0).readsChangesAfter(layerAt: .max) == 0)
    }

    /// A group's transaction that fails before it took its jobs fails every job that waited for
    /// it, those that arrived while it ran included, even while the group before it is still
    /// delivering (it is reported after that one): the jobs are not left to whichever group comes
    /// next. The next job starts a group of its own.
    @Test func aTransactionThatFailsBeforeTakingItsJobsFailsThem() async throws {
        let queue = LayerCommitQueue()
        let key = LayerCommitQueue.LayerKey(documentID: "d", layer: "")
        let outcomes = Outcomes()
        let transactions = Mutex(0)
        let (started, start) = AsyncStream.makeStream(of: Int.self)
        // The steps the test releases in turn: the first group written, the second failing, the
        // first delivering.
        let (firstWritten, writeFirst) = AsyncStream.makeStream(of: Void.self)
        let (secondFailing, failSecond) = AsyncStream.makeStream(of: Void.self)
        let (firstDelivering, deliverFirst) = AsyncStream.makeStream(of: Void.self)
        let transaction: LayerCommitQueue.Transaction = { _, take, written in
            let number = transactions.withLock { count in
                count += 1
                return count
            }
            start.yield(number)
            if number == 2 {
                for await _ in secondFailing { break }
                throw BrokenTransaction()
            }
            let jobs = take()
            if number == 1 { for await _ in firstWritten { break } }
            written()
            return {
                if number == 1 { for await _ in firstDelivering { break } }
                for job in jobs { outcomes.note(job.reading[0], "committed in transaction \(number)") }
            }
        }
        var startedNumbers = started.makeAsyncIterator()
        queue.submit(Self.job("a", outcomes: outcomes), to: key, running: transaction)
        #expect(await startedNumbers.next() == 1)
        queue.submit(Self.job("b", outcomes: outcomes), to: key, running: transaction)
        writeFirst.yield()  // the second group starts
        #expect(await startedNumbers.next() == 2)
        queue.submit(Self.job("c", outcomes: outcomes), to: key, running: transaction)
        #expect(queue.waitingCount(on: key) == 2, "the second transaction has not taken its jobs")
        failSecond.yield()  // while the first is still delivering
        #expect(try await eventually { queue.waitingCount(on: key) == 0 })
        deliverFirst.yield()
        #expect(
            try await eventually {
                outcomes.all == ["a": "committed in transaction 1", "b": "failed", "c": "failed"]
            }, "\(outcomes.all)")
        #expect(transactions.withLock { $0 } == 2)

        queue.submit(Self.job("d", outcomes: outcomes), to: key, running: transaction)
        #expect(try await eventually { outcomes.all["d"] == "committed in transaction 3" }, "\(outcomes.all)")
    }

    /// A group started by a commit on an event loop runs there, and goes on there when another
    /// thread wakes it (the database's, as SQLite's writer does): Swift's global executor would pick
    /// the server's next loop in turn, the turn in which the loops also take new connections.
    @Test func aGroupRunsOnTheLoopOfTheCommitThatStartedIt() async throws {
        let queue = LayerCommitQueue()
        let key = LayerCommitQueue.LayerKey(documentID: "d", layer: "")
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let onLoop = Mutex<[String]>([])
        let (delivered, deliver) = AsyncStream.makeStream(of: Void.self)
        let transaction: LayerCommitQueue.Transaction = { _, take, written in
            onLoop.withLock { $0.append("started: \(loop.inEventLoop)") }
            await withCheckedContinuation { continuation in Thread.detachNewThread { continuation.resume() } }
            onLoop.withLock { $0.append("woken: \(loop.inEventLoop)") }
            _ = take()
            written()
            return {
                onLoop.withLock { $0.append("delivering: \(loop.inEventLoop)") }
                deliver.yield()
            }
        }
        loop.execute { queue.submit(Self.job("a", outcomes: Outcomes()), to: key, running: transaction) }
        for await _ in delivered { break }
        #expect(onLoop.withLock { $0 } == ["started: true", "woken: true", "delivering: true"])
    }
}
