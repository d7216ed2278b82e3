extension LayerEvents: StorageObserver {
    /// Wakes the listeners of what a committed transaction changed.
    public func storageCommitted(_ events: [StorageEvent]) {
        for event in events {
            switch event {
            case .revisionChanged(let documentID, let layer, let revision):
                revisionChanged(Layer(documentID: documentID, name: layer), to: revision)
            case .layerRemoved(let documentID, let layer):
                layerRemoved(Layer(documentID: documentID, name: layer))
            case .tokensRevoked(let ids):
                tokensRevoked(ids)
            }
        }
    }
}
