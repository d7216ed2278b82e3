import Foundation
import GRDB

/// Lets async code run the statements of one GRDB transaction, on the transaction's own thread.
///
/// GRDB runs a transaction as a synchronous closure on its own queue. The bridge keeps that
/// closure open, serving work from the async side one item at a time, until the async side
/// finishes: the transaction then commits (or, when `rollback` was asked, throws and rolls back).
/// The closure blocks a thread of GRDB's queue, not one of Swift's cooperative threads.
///
/// The bridge is also the task executor of the code that runs the transaction
/// (``SQLiteBackend``): that code's jobs run on the serving thread between its statements, so a
/// transaction of many statements costs no switch between threads per statement, only one to
/// start and one to end.
final class SQLiteTransactionBridge: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var work: [Work] = []
    private var ending: Ending?
    private var abandonment: (any Error)?
    private var hasEnded = false
    private var outcome: Result<Void, any Error>?
    private var outcomeWaiter: CheckedContinuation<Void, any Error>?

    /// What the serving thread runs: a statement job, or a job of a task that prefers the bridge
    /// as its executor.
    private enum Work {
        case statement(Job)
        case task(UnownedJob)
    }

    /// A statement job: what it runs on the connection, and how it fails when it never runs.
    private struct Job {
        var run: (Database) -> Void
        var fail: (any Error) -> Void
    }

    private enum Ending {
        case commit
        case rollback
    }

    /// The error the serving closure throws to make GRDB roll back.
    struct RollbackRequested: Error {}

    /// Serves work on the transaction's connection until ``finish(commit:)``; called inside GRDB's
    /// transaction closure.
    func serve(_ db: Database) throws {
        while true {
            condition.lock()
            while work.isEmpty && ending == nil { condition.wait() }
            if work.isEmpty, let ending {
                hasEnded = true
                condition.unlock()
                if case .rollback = ending { throw RollbackRequested() }
                return
            }
            let next = work.removeFirst()
            condition.unlock()
            switch next {
            case .statement(let job): job.run(db)
            case .task(let job): job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }
    }

    /// Runs a job of a task on the serving thread; once the transaction has ended (or could not
    /// start), on Swift's global executor instead.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        guard !hasEnded, abandonment == nil else {
            condition.unlock()
            globalConcurrentExecutor.enqueue(job)
            return
        }
        work.append(.task(job))
        condition.signal()
        condition.unlock()
    }

    /// Runs `body` on the transaction's connection and returns its result.
    func perform<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            condition.lock()
            if let abandonment {
                condition.unlock()
                continuation.resume(throwing: abandonment)
                return
            }
            work.append(
                .statement(
                    Job(
                        run: { db in continuation.resume(with: Result { try body(db) }) },
                        fail: { continuation.resume(throwing: $0) }
                    )))
            condition.signal()
            condition.unlock()
        }
    }

    /// Ends the transaction: the serving closure returns (commit) or throws (rollback) once the
    /// work already queued has run.
    func finish(commit: Bool) {
        condition.lock()
        ending = commit ? .commit : .rollback
        condition.signal()
        condition.unlock()
    }

    /// Called once GRDB has ended the transaction: committed, rolled back, or failed to open or
    /// commit it.
    func ended(_ result: Result<Void, any Error>) {
        if case .failure(let error) = result { abandon(because: error) }
        condition.lock()
        outcome = result
        let waiter = outcomeWaiter
        outcomeWaiter = nil
        condition.unlock()
        waiter?.resume(with: result)
    }

    /// Waits until GRDB has ended the transaction; throws what made it fail.
    func end() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            condition.lock()
            if let outcome {
                condition.unlock()
                continuation.resume(with: outcome)
                return
            }
            outcomeWaiter = continuation
            condition.unlock()
        }
    }

    /// The transaction could not start or ended on its own: fails the waiting and later statement
    /// jobs, and hands the waiting task jobs to the global executor.
    func abandon(because error: any Error) {
        condition.lock()
        abandonment = error
        let waiting = work
        work = []
        condition.unlock()
        for item in waiting {
            switch item {
            case .statement(let job): job.fail(error)
            case .task(let job): globalConcurrentExecutor.enqueue(job)
            }
        }
    }
}
