import Foundation
import InstantJSON

@testable import Instant

/// The real transport to a live server, with faults a test switches on and off: PDF downloads
/// held after their first bytes (the window in which layers share a download), a listening
/// connection that fails (a dropped connection, as when the network goes away), change messages
/// lost on the way; and counts of what went over HTTP and the WebSocket.
final class TestTransport: InstantTransport, @unchecked Sendable {
    private let base: URLSessionTransport
    private let lock = NSLock()
    private var holdsPDFDownloads: Bool
    private var calls = 0
    private var listeningError: InstantError?
    private var listeningFailures = 0
    private var webSocketsAllowed = true
    private var openConnections: [UUID: Task<Void, any Error>] = [:]
    private var droppedConnections: Set<UUID> = []
    private var losesChangeMessage: @Sendable (Int64) -> Bool = { _ in false }
    private var counts = Counts()

    /// What went through the transport.
    struct Counts {
        /// Sync requests over HTTP.
        var httpSyncs = 0
        /// Listening WebSockets opened.
        var webSockets = 0
        /// Change messages handed to the SDK (after losses).
        var changeMessages = 0
        /// Change messages lost on purpose.
        var lostChangeMessages = 0
        /// Presence messages: the server sends one once it has registered the listener.
        var presenceMessages = 0
    }

    /// What went through the transport so far.
    var seen: Counts { lock.withLock { counts } }

    /// - Parameter holdingPDFDownloads: Whether PDF downloads wait for ``release()``, reporting
    ///   progress meanwhile.
    init(serverURL: URL, holdingPDFDownloads: Bool = false) {
        base = URLSessionTransport(serverURL: serverURL)
        holdsPDFDownloads = holdingPDFDownloads
    }

    /// How many PDF downloads reached the network.
    var pdfDownloads: Int { lock.withLock { calls } }

    /// Lets held PDF downloads finish.
    func release() { lock.withLock { holdsPDFDownloads = false } }

    /// Makes every listening request fail with `error` from now on, dropping the open listening
    /// WebSockets (`nil`: listen again).
    func failListening(with error: InstantError?) {
        lock.withLock { listeningError = error }
        if error != nil { dropListeningConnections() }
    }

    /// Breaks the open listening WebSockets, as a network failure would.
    func dropListeningConnections() {
        let open = lock.withLock {
            droppedConnections.formUnion(openConnections.keys)
            return Array(openConnections.values)
        }
        for connection in open { connection.cancel() }
    }

    /// Loses the change messages for which `rule` (given the commit's revision) is true.
    func loseChangeMessages(where rule: @escaping @Sendable (Int64) -> Bool) {
        lock.withLock { losesChangeMessage = rule }
    }

    /// Answers every WebSocket upgrade as a server without WebSockets would (`false`), so that
    /// the SDK long-polls.
    func allowWebSockets(_ allowed: Bool) { lock.withLock { webSocketsAllowed = allowed } }

    /// How many listening requests failed because of ``failListening(with:)``.
    var failedListeningRequests: Int { lock.withLock { listeningFailures } }

    func downloadPDF(
        documentID: String, layer: String, jwt: String, progress: @escaping @Sendable (Int64, Int64?) -> Void
    )
        async throws(InstantError) -> Data
    {
        lock.withLock { calls += 1 }
        let data = try await base.downloadPDF(documentID: documentID, layer: layer, jwt: jwt) { _, _ in }
        while lock.withLock({ holdsPDFDownloads }) {
            if Task.isCancelled { throw InstantError(.cancelled, "The download was cancelled.") }
            progress(1, Int64(data.count))
            try? await Task.sleep(for: .milliseconds(10))
        }
        progress(Int64(data.count), Int64(data.count))
        return data
    }

    func snapshot(documentID: String, layer: String, jwt: String) async throws(InstantError) -> (
        revision: Int64, records: [SyncRecord]
    ) {
        try await base.snapshot(documentID: documentID, layer: layer, jwt: jwt)
    }

    func sync(documentID: String, layer: String, jwt: String, body: JSONValue) async throws(InstantError) -> SyncAnswer
    {
        lock.withLock { counts.httpSyncs += 1 }
        return try await base.sync(documentID: documentID, layer: layer, jwt: jwt, body: body)
    }

    func listen(
        documentID: String, layer: String, jwt: String, since: Int64,
        opened: @escaping @Sendable (ListeningSocket) -> Void,
        received: @escaping @Sendable (ListenMessage) -> Void
    ) async throws(InstantError) {
        let id = UUID()
        let start = lock.withLock { () -> (failure: InstantError?, allowed: Bool) in
            if listeningError != nil { listeningFailures += 1 }
            return (listeningError, webSocketsAllowed)
        }
        if let failure = start.failure { throw failure }
        guard start.allowed else { return }
        let connection = Task { [base] in
            try await base.listen(
                documentID: documentID, layer: layer, jwt: jwt, since: since,
                opened: { [weak self] socket in
                    self?.lock.withLock { self?.counts.webSockets += 1 }
                    opened(socket)
                },
                received: { [weak self] message in
                    guard let self else { return }
                    if case .presence = message { lock.withLock { counts.presenceMessages += 1 } }
                    if case .changes(_, let answer) = message {
                        let lost = lock.withLock {
                            let lost = losesChangeMessage(answer.revision)
                            if lost { counts.lostChangeMessages += 1 } else { counts.changeMessages += 1 }
                            return lost
                        }
                        if lost { return }
                    }
                    received(message)
                })
        }
        lock.withLock { openConnections[id] = connection }
        defer { lock.withLock { _ = openConnections.removeValue(forKey: id) } }
        do {
            try await withTaskCancellationHandler {
                try await connection.value
            } onCancel: {
                connection.cancel()
            }
        } catch {
            if lock.withLock({ droppedConnections.remove(id) != nil }) {
                throw InstantError(.couldNotReachServer, "The test dropped the listening connection.")
            }
            throw error as? InstantError ?? InstantError(.couldNotReachServer, "\(error)")
        }
    }

    func uploadAttachment(
        documentID: String, layer: String, jwt: String, id: String, data: Data, contentType: String
    ) async throws(InstantError) {
        try await base.uploadAttachment(
            documentID: documentID, layer: layer, jwt: jwt, id: id, data: data, contentType: contentType)
    }

    func downloadAttachment(documentID: String, layer: String, jwt: String, id: String) async throws(InstantError)
        -> (data: Data, contentType: String)
    {
        try await base.downloadAttachment(documentID: documentID, layer: layer, jwt: jwt, id: id)
    }

    func waitForChange(documentID: String, layer: String, jwt: String, since: Int64) async throws(InstantError)
        -> Int64
    {
        let failure = lock.withLock {
            if listeningError != nil { listeningFailures += 1 }
            return listeningError
        }
        if let failure { throw failure }
        let revision = try await base.waitForChange(documentID: documentID, layer: layer, jwt: jwt, since: since)
        // A connection dropped while it waited.
        if let failure = lock.withLock({ listeningError }) { throw failure }
        return revision
    }
}
