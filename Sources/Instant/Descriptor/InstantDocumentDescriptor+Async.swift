import Foundation
import Synchronization

extension InstantDocumentDescriptor {
    /// Downloads the document and its layer, and returns once they are downloaded.
    ///
    /// The same as ``download(usingJWT:)`` followed by waiting for
    /// `Notification.Name.instantDidFinishDownload`; the notifications and the delegate's calls
    /// still happen.
    ///
    /// ```swift
    /// let descriptor = try client.documentDescriptor(forJWT: jwt)
    /// try await descriptor.downloadAndWait(usingJWT: jwt)
    /// let document = descriptor.editableDocument
    /// ```
    /// - Throws: What ``download(usingJWT:)`` throws, or the `InstantError` the download failed
    ///   with (`userInfo[InstantNotificationKey.error]` of `instantDidFailDownload`);
    ///   `CancellationError` when the task is cancelled (the download goes on).
    public func downloadAndWait(usingJWT jwt: String) async throws {
        try await waitForOutcome(success: .instantDidFinishDownload, failures: [.instantDidFailDownload]) {
            try download(usingJWT: jwt)
        }
    }

    /// Starts a sync cycle (``sync()``) and returns once a sync cycle finished: local changes are
    /// confirmed by the server and its changes applied.
    /// - Throws: ``InstantError/Code/notDownloaded`` or ``InstantError/Code/documentInvalidated``
    ///   when the descriptor cannot sync; the cycle's `InstantError`
    ///   (`instantDidFailSyncing`); ``InstantError/Code/authenticationFailed`` when the server
    ///   refused the token (call ``reauthenticateAndWait(withJWT:)``); `CancellationError` when the
    ///   task is cancelled (the cycle goes on).
    public func syncAndWait() async throws {
        switch documentState {
        case .unknown, .needsContentMigration:
            throw InstantError(.notDownloaded, "The document is not downloaded; call downloadAndWait(usingJWT:) first.")
        case .invalid:
            throw InstantError(
                .documentInvalidated, "The descriptor is invalid (its client was released or its storage removed).")
        default:
            break
        }
        try await waitForOutcome(
            success: .instantDidFinishSyncing, failures: [.instantDidFailSyncing, .instantDidFailAuthentication]
        ) { sync() }
    }

    /// Hands the descriptor a new JWT (``reauthenticate(withJWT:)``) and returns once the server
    /// accepted it.
    /// - Throws: What ``reauthenticate(withJWT:)`` throws, or the `InstantError` of
    ///   `instantDidFailReauthentication`; `CancellationError` when the task is cancelled.
    public func reauthenticateAndWait(withJWT jwt: String) async throws {
        try await waitForOutcome(
            success: .instantDidFinishReauthentication, failures: [.instantDidFailReauthentication]
        ) { try reauthenticate(withJWT: jwt) }
    }

    /// Observes this descriptor's notifications, runs `start`, and returns at the first `success`
    /// notification or throws at the first of `failures`. Observing begins before `start`, so an
    /// outcome posted at once is not missed.
    private func waitForOutcome(
        success: Notification.Name, failures: [Notification.Name], start: () throws -> Void
    ) async throws {
        let outcome = OutcomeWaiter()
        let center = NotificationCenter.default
        let observers = ([success] + failures).map { name in
            center.addObserver(forName: name, object: self, queue: nil) { notification in
                guard name != success else { return outcome.finish(.success(())) }
                let error =
                    notification.userInfo?[InstantNotificationKey.error] as? InstantError
                    ?? InstantError(
                        .authenticationFailed, "The server refused the JWT; reauthenticate with a new one.")
                outcome.finish(.failure(error))
            }
        }
        defer { for observer in observers { center.removeObserver(observer) } }
        try start()
        try await outcome.value()
    }
}

/// The first outcome of an operation, for one waiter (which may be cancelled).
private final class OutcomeWaiter: Sendable {
    private enum State {
        case pending
        case waiting(CheckedContinuation<Void, any Error>)
        case finished(Result<Void, any Error>)
    }

    private let state = Mutex(State.pending)

    /// Delivers the outcome; later ones are ignored.
    func finish(_ result: Result<Void, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            switch state {
            case .pending:
                state = .finished(result)
                return nil
            case .waiting(let continuation):
                state = .finished(result)
                return continuation
            case .finished:
                return nil
            }
        }
        continuation?.resume(with: result)
    }

    /// Waits for the outcome; throws `CancellationError` once the task is cancelled.
    func value() async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let finished = state.withLock { state -> Result<Void, any Error>? in
                    switch state {
                    case .pending:
                        state = .waiting(continuation)
                        return nil
                    case .finished(let result):
                        return result
                    case .waiting:
                        preconditionFailure("one waiter only")
                    }
                }
                if let finished { continuation.resume(with: finished) }
            }
        } onCancel: {
            finish(.failure(CancellationError()))
        }
    }
}
