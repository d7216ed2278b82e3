/// Receives a client's events for all its descriptors, the same events the notifications carry.
/// Every method has an empty default, so implement only what you need. Methods are called off
/// the main thread.
///
/// The descriptor is always the parameter `descriptor`: labelled after the event when the event
/// has nothing else to say (`didFinishDownloadFor:`), and `documentDescriptor:` before what it
/// says (`documentDescriptor:didFailSyncWithError:`), as the seeds name the methods.
public protocol InstantClientDelegate: AnyObject, Sendable {
    /// A download (PDF and records) finished; the descriptor is usable.
    func instantClient(_ client: InstantClient, didFinishDownloadFor descriptor: InstantDocumentDescriptor)
    /// A download failed or was cancelled.
    func instantClient(
        _ client: InstantClient, documentDescriptor descriptor: InstantDocumentDescriptor,
        didFailDownloadWithError error: InstantError)
    /// A sync cycle started.
    func instantClient(_ client: InstantClient, didBeginSyncFor descriptor: InstantDocumentDescriptor)
    /// A running sync cycle moved to `sendingChanges` or `receivingChanges`.
    func instantClient(
        _ client: InstantClient, documentDescriptor descriptor: InstantDocumentDescriptor,
        didChangeSyncStateTo state: InstantDocumentState)
    /// A sync cycle finished; the layer is `clean` (or `dirty` if edits arrived meanwhile).
    func instantClient(_ client: InstantClient, didFinishSyncFor descriptor: InstantDocumentDescriptor)
    /// A sync cycle failed; it will be retried if the failure was the network's.
    func instantClient(
        _ client: InstantClient, documentDescriptor descriptor: InstantDocumentDescriptor,
        didFailSyncWithError error: InstantError)
    /// The server refused the JWT; no sync happens until ``InstantDocumentDescriptor/reauthenticate(withJWT:)``.
    func instantClient(_ client: InstantClient, didFailAuthenticationFor descriptor: InstantDocumentDescriptor)
    /// A reauthentication succeeded with the given token.
    func instantClient(
        _ client: InstantClient, documentDescriptor descriptor: InstantDocumentDescriptor,
        didFinishReauthenticationWithJWT jwt: String)
    /// A reauthentication failed.
    func instantClient(
        _ client: InstantClient, documentDescriptor descriptor: InstantDocumentDescriptor,
        didFailReauthenticationWithError error: InstantError)
    /// The listening connection dropped or could not be made (`instantDidFailListening`): after a
    /// network failure the descriptor keeps reconnecting; after any other, listening has ended.
    func instantClient(
        _ client: InstantClient, documentDescriptor descriptor: InstantDocumentDescriptor,
        didFailListeningWithError error: InstantError)
    /// The listening connection is back (`instantDidResumeListening`).
    func instantClient(_ client: InstantClient, didResumeListeningFor descriptor: InstantDocumentDescriptor)
}

extension InstantClientDelegate {
    public func instantClient(_ client: InstantClient, didFinishDownloadFor descriptor: InstantDocumentDescriptor) {}
    public func instantClient(
        _ client: InstantClient, documentDescriptor descriptor: InstantDocumentDescriptor,
        didFailDownloadWithError error: InstantError
    ) {}
    public func instantClient(_ client: InstantClient, didBeginSyncFor descriptor: InstantDocumentDescriptor) {}
    public func instantClient(
        _ client: InstantClient, documentDescriptor descriptor: InstantDocumentDescriptor,
        didChangeSyncStateTo state: InstantDocumentState
    ) {}
    public func instantClient(_ client: InstantClient, didFinishSyncFor descriptor: InstantDocumentDescriptor) {}
    public func instantClient(
        _ client: InstantClient, documentDescriptor descriptor: InstantDocumentDescriptor,
        didFailSyncWithError error: InstantError
    ) {}
    public func instantClient(_ client: InstantClient, didFailAuthenticationFor descriptor: InstantDocumentDescriptor) {
    }
    public func instantClient(
        _ client: InstantClient, documentDescriptor descriptor: InstantDocumentDescriptor,
        didFinishReauthenticationWithJWT jwt: String
    ) {}
    public func instantClient(
        _ client: InstantClient, documentDescriptor descriptor: InstantDocumentDescriptor,
        didFailReauthenticationWithError error: InstantError
    ) {}
    public func instantClient(
        _ client: InstantClient, documentDescriptor descriptor: InstantDocumentDescriptor,
        didFailListeningWithError error: InstantError
    ) {}
    public func instantClient(_ client: InstantClient, didResumeListeningFor descriptor: InstantDocumentDescriptor) {}
}
