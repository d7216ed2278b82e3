import Foundation
import Hummingbird
import ServiceLifecycle

/// Runs the server's CPU-heavy PDF work (reading uploaded PDFs, writing exported PDFs and
/// decoding their images) on worker threads of its own, so that the event loops and Swift's
/// cooperative thread pool, which answer every other request (`/healthcheck`, sync, listening),
/// stay free however long a PDF takes.
///
/// A fixed number of workers take jobs in arrival order from a bounded queue; a job that finds
/// every worker busy and the queue full is refused at once with 503 and `Retry-After`. A job whose
/// request is cancelled while it waits is dropped. The workers start with the first job; as a
/// service of the application the pool stops them when the server shuts down, after the jobs
/// already queued.
public final class PDFWorkPool: Service, @unchecked Sendable {
    /// The number of worker threads.
    public let workers: Int
    /// How many jobs may wait for a worker.
    public let queueLimit: Int
    /// The seconds a refused client is asked to wait before retrying.
    static let retryAfterSeconds = 5

    private struct Job {
        let id: Int
        let run: @Sendable () -> Void
        let cancel: @Sendable () -> Void
    }

    private let condition = NSCondition()
    private var waiting: [Job] = []
    private var running = 0
    private var threads = 0
    private var stopping = false
    private var nextID = 0
    /// Jobs given an id but not queued yet, and those of them whose request was cancelled already.
    private var unqueued = Set<Int>()
    private var cancelledEarly = Set<Int>()

    /// A pool of `workers` threads with room for `queueLimit` waiting jobs.
    public init(workers: Int, queueLimit: Int) {
        precondition(workers > 0 && queueLimit >= 0, "a PDF work pool needs a worker and a queue limit of 0 or more")
        self.workers = workers
        self.queueLimit = queueLimit
    }

    /// The pool a configuration asks for.
    public convenience init(configuration: PDFProcessingConfiguration) {
        self.init(workers: configuration.workers, queueLimit: configuration.queueLimit)
    }

    /// The jobs running now.
    public var runningJobs: Int { locked { running } }
    /// The jobs waiting for a worker now.
    public var waitingJobs: Int { locked { waiting.count } }

    /// Runs `work` on a worker thread and returns what it returns.
    ///
    /// - Throws: ``APIError`` 503 with `Retry-After` when every worker is busy and the queue is
    ///   full, or when the server is shutting down; `CancellationError` when the calling task is
    ///   cancelled while the job waits; whatever `work` throws.
    public func perform<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        let id = locked {
            nextID += 1
            unqueued.insert(nextID)
            return nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                let job = Job(
                    id: id, run: { continuation.resume(with: Result(catching: work)) },
                    cancel: { continuation.resume(throwing: CancellationError()) })
                if let refusal = enqueue(job) { continuation.resume(throwing: refusal) }
            }
        } onCancel: {
            cancel(id)
        }
    }

    /// Waits until the server shuts down, then stops the pool.
    public func run() async throws {
        try? await gracefulShutdown()
        stop()
    }

    /// Lets the workers finish the queued jobs and stop; later jobs are refused with 503.
    func stop() {
        locked {
            stopping = true
            condition.broadcast()
        }
    }

    /// Queues a job, starting a worker if none is free; the error to answer when it is refused.
    private func enqueue(_ job: Job) -> (any Error)? {
        condition.lock()
        defer { condition.unlock() }
        unqueued.remove(job.id)
        if cancelledEarly.remove(job.id) != nil { return CancellationError() }
        guard !stopping else {
            return APIError(
                .serviceUnavailable, "The server is shutting down; retry the request with another server.",
                headers: [.retryAfter: String(Self.retryAfterSeconds)])
        }
        guard running + waiting.count < workers + queueLimit else {
            return APIError(
                .serviceUnavailable,
                "The server is busy with PDF work: its \(workers) PDF workers are busy and \(queueLimit) more "
                    + "uploads or exports wait for them. Retry after \(Self.retryAfterSeconds) seconds, or start the "
                    + "server with more \(PDFProcessingConfiguration.Setting.workers.named) or a longer "
                    + "\(PDFProcessingConfiguration.Setting.queueLimit.named).",
                headers: [.retryAfter: String(Self.retryAfterSeconds)])
        }
        waiting.append(job)
        if threads - running < waiting.count, threads < workers {
            threads += 1
            let thread = Thread { [self] in work() }
            thread.name = "instant-pdf-\(threads)"
            thread.stackSize = 8 << 20
            thread.start()
        }
        condition.signal()
        return nil
    }

    /// Drops a waiting job whose request was cancelled (a running job finishes).
    private func cancel(_ id: Int) {
        condition.lock()
        guard let index = waiting.firstIndex(where: { $0.id == id }) else {
            // Not queued yet: refused when it is. Running or done: nothing to do.
            if unqueued.contains(id) { cancelledEarly.insert(id) }
            condition.unlock()
            return
        }
        let job = waiting.remove(at: index)
        condition.unlock()
        job.cancel()
    }

    /// A worker: takes jobs until the pool stops and nothing waits.
    private func work() {
        condition.lock()
        while true {
            while waiting.isEmpty, !stopping { condition.wait() }
            guard !waiting.isEmpty else {
                threads -= 1
                condition.unlock()
                return
            }
            let job = waiting.removeFirst()
            running += 1
            condition.unlock()
            job.run()
            condition.lock()
            running -= 1
        }
    }

    private func locked<Value>(_ body: () -> Value) -> Value {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }
}
