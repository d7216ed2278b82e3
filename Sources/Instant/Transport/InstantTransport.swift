import Foundation
import InstantJSON

/// How the SDK talks to the server: the four client routes of the sync protocol
/// (see docs/PROTOCOL.md). ``URLSessionTransport`` is the real one; tests may inject another.
protocol InstantTransport: Sendable {
    /// Downloads the document's PDF (the same for all its layers) through the route of the
    /// layer the token is for, reporting bytes received and the expected total.
    func downloadPDF(
        documentID: String, layer: String, jwt: String, progress: @escaping @Sendable (Int64, Int64?) -> Void
    )
        async throws(InstantError) -> Data

    /// The layer's current records and revision.
    func snapshot(documentID: String, layer: String, jwt: String) async throws(InstantError) -> (
        revision: Int64, records: [SyncRecord]
    )

    /// One sync round trip.
    func sync(documentID: String, layer: String, jwt: String, body: JSONValue) async throws(InstantError) -> SyncAnswer

    /// Uploads an attachment under the SHA-256 of its bytes.
    func uploadAttachment(
        documentID: String, layer: String, jwt: String, id: String, data: Data, contentType: String
    ) async throws(InstantError)

    /// Downloads an attachment: its bytes and content type.
    func downloadAttachment(documentID: String, layer: String, jwt: String, id: String) async throws(InstantError)
        -> (data: Data, contentType: String)

    /// Waits until the layer's revision exceeds `since` (or the server's long-poll timeout) and
    /// returns the revision the server reports.
    func waitForChange(documentID: String, layer: String, jwt: String, since: Int64) async throws(InstantError)
        -> Int64
}
