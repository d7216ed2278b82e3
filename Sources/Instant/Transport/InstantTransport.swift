import Foundation
import InstantJSON

/// How the SDK talks to the server: the client routes of the sync protocol
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

    /// Opens the layer's listening WebSocket, asking for change messages with records, and runs
    /// it until it ends: `opened` gets the socket to send sync requests on once it is open,
    /// `received` every change message or revision, in order.
    ///
    /// Returns only when the server answered without upgrading the connection (a proxy without
    /// WebSockets, or a refusal: a long-poll tells which). Every other end throws:
    /// ``InstantError/Code/authenticationFailed`` when the server closed it for the token (expired
    /// or revoked), ``InstantError/Code/couldNotReachServer`` when it could not be opened or
    /// dropped, ``InstantError/Code/cancelled`` when the task was cancelled.
    func listen(
        documentID: String, layer: String, jwt: String, since: Int64,
        opened: @escaping @Sendable (ListeningSocket) -> Void,
        received: @escaping @Sendable (ListenMessage) -> Void
    ) async throws(InstantError)

    /// Waits until the layer's revision exceeds `since` (or the server's long-poll timeout) and
    /// returns the revision the server reports.
    func waitForChange(documentID: String, layer: String, jwt: String, since: Int64) async throws(InstantError)
        -> Int64
}
