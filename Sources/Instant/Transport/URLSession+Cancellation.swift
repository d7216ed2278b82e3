import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSession {
    /// Loads a request like `data(for:)`, cancelled with the calling task, but without calling into
    /// URLSession while Swift holds the task's cancellation lock.
    ///
    /// FoundationNetworking's `data(for:)` cancels its request synchronously from the task's
    /// cancellation handler, waiting for the session's queue, while that queue may be resuming
    /// the same task (which waits for the cancellation lock): both wait forever. Here the request
    /// completes on the session's delegate queue and a cancellation only schedules
    /// `URLSessionTask.cancel()`, so neither side ever waits for the other.
    ///
    /// FoundationNetworking also waits for the session's queue to make a task and to resume it,
    /// a wait of milliseconds while the session moves other requests' bytes. Both happen on a
    /// dispatch queue, never on a thread of Swift's cooperative pool: there, in a process with
    /// many requests under way, those waits held the pool's threads (in the full test run, a
    /// quarter of their time) and every task of the process waited behind them.
    func cancellableData(for request: URLRequest) async throws -> (Data, URLResponse) {
        let running = RunningRequest()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async {
                    let task = self.dataTask(with: request) { data, response, error in
                        if let error {
                            continuation.resume(throwing: error)
                        } else if let data, let response {
                            continuation.resume(returning: (data, response))
                        } else {
                            continuation.resume(throwing: URLError(.badServerResponse))
                        }
                    }
                    running.start(task)
                }
            }
        } onCancel: {
            running.cancel()
        }
    }
}

/// A request's `URLSessionTask` and whether its caller gave up on it, whichever comes first.
private final class RunningRequest: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionTask?
    private var isCancelled = false

    /// Starts the task, or cancels it at once if the caller already gave up.
    func start(_ task: URLSessionTask) {
        let cancelled = lock.withLock {
            self.task = task
            return isCancelled
        }
        task.resume()
        if cancelled { Self.cancelLater(task) }
    }

    /// Cancels the task if it started; a task that starts later is cancelled by ``start(_:)``.
    func cancel() {
        let task = lock.withLock {
            isCancelled = true
            return self.task
        }
        if let task { Self.cancelLater(task) }
    }

    private static func cancelLater(_ task: URLSessionTask) {
        DispatchQueue.global().async { task.cancel() }
    }
}
