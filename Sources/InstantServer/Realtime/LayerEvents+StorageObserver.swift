extension LayerEvents: StorageObserver {
    /// Encodes what each commit wrote once, for every listener that receives records (outside the
    /// actor; only its revisions when no listener of the layer receives records), then keeps the
    /// messages and wakes the listeners.
    public nonisolated func recordsCommitted(_ changes: [LayerChangeSet]) async {
        let maximumSize = limits.maximumChangeMessageSize
        await recordsCommitted(
            changes.map { changes in
                let layer = Layer(documentID: changes.documentID, name: changes.layer)
                return (
                    layer,
                    hasRecordListeners(on: layer)
                        ? ChangeMessage(changes, maximumSize: maximumSize) : ChangeMessage(revisionsOf: changes)
                )
            })
    }

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
