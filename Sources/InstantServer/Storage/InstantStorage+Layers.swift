import Foundation

extension InstantStorage {
    /// The layers of a document, by name.
    /// - Throws: ``StorageError/Code/documentNotFound``.
    public func layers(documentID: String) async throws -> [StoredLayer] {
        try await backend.read { transaction in
            _ = try await Self.requireDocument(transaction, documentID)
            return try await transaction.layers(documentID: documentID)
        }
    }

    /// The layer, or `nil` if the document has no layer of that name.
    public func layer(documentID: String, name: String) async throws -> StoredLayer? {
        try await backend.readStatement { try await $0.layer(documentID: documentID, name: name, forUpdate: false) }
    }

    /// Creates a layer from the given source.
    /// - Throws: ``StorageError/Code/documentNotFound``, ``StorageError/Code/layerExists``,
    ///   ``StorageError/Code/layerNotFound`` (for a missing source layer).
    @discardableResult
    public func createLayer(documentID: String, name: String, source: LayerSource) async throws -> StoredLayer {
        let now = clock()
        return try await write { transaction in
            _ = try await Self.requireDocument(transaction, documentID)
            guard
                let layer = try await Self.insertLayer(
                    transaction, documentID: documentID, name: name, source: source, now: now)
            else {
                throw StorageError(
                    .layerExists,
                    "The document '\(documentID)' already has a layer named '\(name)'. Delete it first or use another name."
                )
            }
            return (layer, [.revisionChanged(documentID: documentID, layer: name, revision: layer.revision)])
        }
    }

    /// Returns the layer, creating it from the base records if it does not exist yet.
    /// - Throws: ``StorageError/Code/documentNotFound``.
    public func layerCreatingIfNeeded(documentID: String, name: String) async throws -> StoredLayer {
        try await pageCountAndLayer(documentID: documentID, layer: name).layer
    }

    /// The document's page count and its layer, read together (one statement on PostgreSQL, where
    /// a client request used to need two transactions); the layer is created from the base records
    /// if it does not exist yet.
    /// - Throws: ``StorageError/Code/documentNotFound``.
    public func pageCountAndLayer(documentID: String, layer name: String) async throws
        -> (pageCount: Int, layer: StoredLayer)
    {
        let (found, existing) = try await backend.readStatement { transaction in
            try await transaction.pageCountAndLayer(documentID: documentID, name: name)
        }
        guard let pageCount = found else { throw Self.documentNotFound(documentID) }
        if let existing { return (pageCount, existing) }
        let now = clock()
        let layer = try await write { transaction in
            _ = try await Self.requireDocument(transaction, documentID)
            if let created = try await Self.insertLayer(
                transaction, documentID: documentID, name: name, source: .baseRecords, now: now)
            {
                return (created, [.revisionChanged(documentID: documentID, layer: name, revision: created.revision)])
            }
            // Another writer created it first.
            return (try await Self.requireLayer(transaction, documentID: documentID, name: name), [])
        }
        return (pageCount, layer)
    }

    /// Deletes a layer and its records. Returns whether it existed.
    public func deleteLayer(documentID: String, name: String) async throws -> Bool {
        try await write { transaction in
            let existed = try await transaction.deleteLayer(documentID: documentID, name: name)
            return (existed, existed ? [.layerRemoved(documentID: documentID, layer: name)] : [])
        }
    }

    /// Inserts a layer with its first records: a layer starts at revision 1 when it has records, at 0
    /// otherwise. Returns `nil` (and writes nothing) if the layer exists.
    static func insertLayer(
        _ transaction: any StorageTransaction,
        documentID: String,
        name: String,
        source: LayerSource,
        now: Date
    ) async throws -> StoredLayer? {
        if case .layer(let sourceName) = source {
            _ = try await requireLayer(transaction, documentID: documentID, name: sourceName)
        }
        guard try await transaction.insertLayer(documentID: documentID, name: name, revision: 0) else { return nil }
        let firstRevision: Int64 = 1
        let copied: Int
        switch source {
        case .empty:
            copied = 0
        case .baseRecords:
            // Base records are as the PDF has them: no users, and thread roots read from the comments.
            let rows = try await transaction.baseRecords(documentID: documentID).map { base in
                var record = base
                record.revision = firstRevision
                record.createdBy = nil
                record.updatedBy = nil
                record.updatedAt = now
                return RecordRow(record: record, threadRoot: threadRoot(of: record))
            }
            try await transaction.upsert(rows, documentID: documentID, layer: name)
            copied = rows.count
        case .layer(let sourceName):
            copied = try await transaction.copyLiveRecords(
                documentID: documentID, from: sourceName, to: name, revision: firstRevision, at: now)
        }
        guard copied > 0 else { return StoredLayer(documentID: documentID, name: name, revision: 0) }
        try await transaction.setRevision(documentID: documentID, layer: name, to: firstRevision)
        return StoredLayer(documentID: documentID, name: name, revision: firstRevision)
    }
}
