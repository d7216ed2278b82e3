import Foundation
import InstantJSON
import Synchronization

extension InstantDocumentDescriptor {
    /// How many change messages wait at most for the next sync cycle; past that the oldest are
    /// dropped, and the cycle pulls what they held.
    static let maxAnnouncedChanges = 256

    /// Listens on the layer's WebSocket with change messages, or by long-polling where the
    /// server does not upgrade the connection; reconnects after network failures, less and less
    /// often (the sync retries' policy), without giving up.
    func startListening() {
        let documentID = identifier
        let layer = layerName
        let policy = lock.withLock { machine.retryPolicy }
        let task = Task { [weak self] in
            var failures = 0
            var tryWebSocket = true
            while !Task.isCancelled {
                guard let self, let jwt = lock.withLock({ self.jwt }) else { return }
                let opened = Mutex(false)
                do throws(InstantError) {
                    let since = try store.revision(documentID: documentID, layer: layer)
                    if tryWebSocket {
                        try await transport.listen(
                            documentID: documentID, layer: layer, jwt: jwt, since: since,
                            opened: { [weak self] socket in
                                opened.withLock { $0 = true }
                                self?.listeningSocketOpened(socket)
                            },
                            received: { [weak self] message in self?.announced(message) })
                        // The server did not upgrade: long-poll once, which also says why.
                        tryWebSocket = false
                        continue
                    }
                    tryWebSocket = true
                    let revision = try await transport.waitForChange(
                        documentID: documentID, layer: layer, jwt: jwt, since: since)
                    failures = 0
                    deliver(.listeningResumed)
                    if revision > since, !Task.isCancelled {
                        lock.withLock { announcedRevision = max(announcedRevision, revision) }
                        deliver(.syncRequested(.serverPoke))
                    }
                } catch {
                    lock.withLock { listeningSocket = nil }
                    guard !Task.isCancelled, error.code != .cancelled else { return }
                    if opened.withLock({ $0 }) { failures = 0 }
                    if error.code == .authenticationFailed, lock.withLock({ self.jwt }) != jwt {
                        // The socket's token ran out, but the app has handed over a new one.
                        continue
                    }
                    // The machine posts the failure once and stops this task unless it is a
                    // network failure.
                    deliver(.listeningFailed(error))
                    guard error.isRetryable else { return }
                    failures += 1
                    try? await Task.sleep(
                        for: policy.delay(beforeAttempt: failures, randomFraction: Double.random(in: 0..<1)))
                }
            }
        }
        replaceTask(\.listenTask, with: task)
    }

    private func listeningSocketOpened(_ socket: ListeningSocket) {
        lock.withLock { listeningSocket = socket }
        deliver(.listeningResumed)
    }

    /// A change message or a newer revision arrived: change messages wait for the sync cycle the
    /// announcement starts, which applies them without a request when they follow the local
    /// revision.
    private func announced(_ message: ListenMessage) {
        let local = (try? store.revision(documentID: identifier, layer: layerName)) ?? 0
        switch message {
        case .changes(let since, let answer):
            // Our own commits, and commits an answer already brought, need nothing.
            guard answer.revision > local else { return }
            lock.withLock {
                announcedChanges.append((since, answer))
                announcedChanges.removeFirst(max(0, announcedChanges.count - Self.maxAnnouncedChanges))
                announcedRevision = max(announcedRevision, answer.revision)
            }
        case .revision(let revision):
            guard revision > local else { return }
            lock.withLock { announcedRevision = max(announcedRevision, revision) }
        case .presence:
            return
        }
        deliver(.syncRequested(.serverPoke))
    }

    /// What the server announced after a revision.
    enum Announced {
        /// Changes that follow the revision without a gap up to the newest announced revision, as
        /// one pull answer.
        case changes(SyncAnswer)
        /// Nothing was announced after the revision: a fetch of the same cycle already took it.
        case nothingNew
        /// A newer revision was announced without all the changes that lead to it (a message was
        /// lost, dropped, or too large to be sent): they are to be pulled.
        case missing
    }

    /// Takes the announced changes after `revision` when they lead to the newest announced
    /// revision; changes at or below `revision` are dropped.
    func takeAnnouncedChanges(after revision: Int64) -> Announced {
        lock.withLock {
            announcedChanges.removeAll { $0.answer.revision <= revision }
            guard announcedRevision > revision else { return .nothingNew }
            var reached = revision
            var records: [SyncRecord] = []
            for change in announcedChanges {
                guard change.since == reached else { return .missing }
                records += change.answer.records
                reached = change.answer.revision
            }
            guard reached >= announcedRevision else { return .missing }
            announcedChanges.removeAll()
            return .changes(SyncAnswer(revision: reached, records: records))
        }
    }

    /// Sends a sync request on the listening WebSocket when it is open, else (or when it closes
    /// before the answer) over HTTP; the push id makes sending it twice safe.
    func sendSyncRequest(_ body: JSONValue, jwt: String) async throws(InstantError) -> SyncAnswer {
        if let socket = lock.withLock({ listeningSocket }), !socket.isClosed {
            do {
                return try await socket.sync(body)
            } catch  where error.code == .couldNotReachServer {
                // Lost with the connection: over HTTP instead.
            }
        }
        return try await transport.sync(documentID: identifier, layer: layerName, jwt: jwt, body: body)
    }
}
