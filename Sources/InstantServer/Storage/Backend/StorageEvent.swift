/// A committed change that listeners care about. Events only name what changed; the records
/// themselves are read from storage.
public enum StorageEvent: Sendable, Hashable {
    /// A layer reached a new revision (records changed, or the layer was created).
    case revisionChanged(documentID: String, layer: String, revision: Int64)
    /// A layer was deleted, alone or with its document.
    case layerRemoved(documentID: String, layer: String)
    /// Token ids (`jti`) were revoked.
    case tokensRevoked([String])
}

/// Receives the events of every transaction that ``InstantStorage`` committed, after the commit, in
/// the order of the commits made through one storage.
public protocol StorageObserver: Sendable {
    /// Called after a transaction with these events committed.
    func storageCommitted(_ events: [StorageEvent]) async
}
