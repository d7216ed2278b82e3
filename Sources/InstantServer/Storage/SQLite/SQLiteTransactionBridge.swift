import Foundation
import GRDB

/// Lets async code run the statements of one GRDB transaction.
///
/// GRDB runs a transaction as a synchronous closure on its own queue. The bridge keeps that
/// closure open, serving one job at a time from the async side, until the async side finishes:
/// the transaction then commits (or, when `rollback` was asked, throws and rolls back). The
/// closure blocks a thread of GRDB's queue, not one of Swift's cooperative threads.
final class SQLiteTransactionBridge: @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var jobs: [Job] = []
    private var ending: Ending?
    private var abandonment: (any Error)?

    /// A job: what it runs on the connection, and how it fails when it never runs.
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

    /// Serves jobs on the transaction's connection until ``finish(commit:)``; called inside GRDB's
    /// transaction closure.
    func serve(_ db: Database) throws {
        while true {
            condition.lock()
            while jobs.isEmpty && ending == nil { condition.wait() }
            if jobs.isEmpty, let ending {
                condition.unlock()
                if case .rollback = ending { throw RollbackRequested() }
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.run(db)
        }
    }

    /// Runs `work` on the transaction's connection and returns its result.
    func perform<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            condition.lock()
            if let abandonment {
                condition.unlock()
                continuation.resume(throwing: abandonment)
                return
            }
            jobs.append(
                Job(
                    run: { db in continuation.resume(with: Result { try work(db) }) },
                    fail: { continuation.resume(throwing: $0) }
                ))
            condition.signal()
            condition.unlock()
        }
    }

    /// Ends the transaction: the serving closure returns (commit) or throws (rollback).
    func finish(commit: Bool) {
        condition.lock()
        ending = commit ? .commit : .rollback
        condition.signal()
        condition.unlock()
    }

    /// The transaction could not start or ended on its own: fails the waiting and later jobs.
    func abandon(because error: any Error) {
        condition.lock()
        abandonment = error
        let waiting = jobs
        jobs = []
        condition.unlock()
        for job in waiting { job.fail(error) }
    }
}
