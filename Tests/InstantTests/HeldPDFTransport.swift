import Foundation
import InstantJSON

@testable import Instant

/// The real transport, except that PDF downloads hold on after their first bytes until
/// ``release()``, reporting progress meanwhile: the window in which layers share a download.
final class HeldPDFTransport: InstantTransport, @unchecked Sendable {
    private let base: URLSessionTransport
    private let lock = NSLock()
    private var released = false
    private var calls = 0

    init(serverURL: URL) {
        base = URLSessionTransport(serverURL: serverURL)
    }

    /// How many PDF downloads reached the network.
    var pdfDownloads: Int { lock.withLock { calls } }

    /// Lets held PDF downloads finish.
    func release() { lock.withLock { released = true } }

    func downloadPDF(
        documentID: String, layer: String, jwt: String, progress: @escaping @Sendable (Int64, Int64?) -> Void
    )
        async throws(InstantError) -> Data
    {
        lock.withLock { calls += 1 }
        let data = try await base.downloadPDF(documentID: documentID, layer: layer, jwt: jwt) { _, _ in }
        while !lock.withLock({ released }) {
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
        try await base.waitForChange(documentID: documentID, layer: layer, jwt: jwt, since: since)
    }
}
