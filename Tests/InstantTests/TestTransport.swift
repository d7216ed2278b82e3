import Foundation
import InstantJSON

@testable import Instant

/// The real transport to a live server, with faults a test switches on and off: PDF downloads
/// held after their first bytes (the window in which layers share a download), and a listening
/// connection that fails (a dropped connection, as when the network goes away).
final class TestTransport: InstantTransport, @unchecked Sendable {
    private let base: URLSessionTransport
    private let lock = NSLock()
    private var holdsPDFDownloads: Bool
    private var calls = 0
    private var listeningError: InstantError?
    private var listeningFailures = 0

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

    /// Makes every listening request fail with `error` from now on (`nil`: listen again).
    func failListening(with error: InstantError?) { lock.withLock { listeningError = error } }

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
        try await base.sync(documentID: documentID, layer: layer, jwt: jwt, body: body)
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
