import Foundation

/// Storage that reports every committed change of a layer's revision, every removed layer and
/// every revoked token to ``LayerEvents``, whoever made the change (REST API, sync, import).
struct NotifyingStorage: InstantStorage {
    let base: any InstantStorage
    let events: LayerEvents

    func createDocument(
        _ document: StoredDocument,
        pdf: Data,
        baseRecords: [RecordWrite],
        initialChanges: [RecordChange],
        attachments: [StoredAttachment]
    ) async throws {
        try await base.createDocument(
            document, pdf: pdf, baseRecords: baseRecords, initialChanges: initialChanges, attachments: attachments)
    }

    func document(id: String) async throws -> StoredDocument? { try await base.document(id: id) }

    func listDocuments(_ query: DocumentQuery) async throws -> DocumentListing { try await base.listDocuments(query) }

    func deleteDocument(id: String) async throws -> Bool {
        let layers = (try? await base.layers(documentID: id)) ?? []
        let existed = try await base.deleteDocument(id: id)
        for layer in layers { await events.layerRemoved(.init(documentID: id, name: layer.name)) }
        return existed
    }

    func pdf(sha256: String) async throws -> Data? { try await base.pdf(sha256: sha256) }

    func baseRecords(documentID: String) async throws -> [StoredRecord] {
        try await base.baseRecords(documentID: documentID)
    }

    func layers(documentID: String) async throws -> [StoredLayer] { try await base.layers(documentID: documentID) }

    func layer(documentID: String, name: String) async throws -> StoredLayer? {
        try await base.layer(documentID: documentID, name: name)
    }

    func createLayer(documentID: String, name: String, source: LayerSource) async throws -> StoredLayer {
        let layer = try await base.createLayer(documentID: documentID, name: name, source: source)
        await events.revisionChanged(.init(documentID: documentID, name: name), to: layer.revision)
        return layer
    }

    func layerCreatingIfNeeded(documentID: String, name: String) async throws -> StoredLayer {
        try await base.layerCreatingIfNeeded(documentID: documentID, name: name)
    }

    func deleteLayer(documentID: String, name: String) async throws -> Bool {
        let existed = try await base.deleteLayer(documentID: documentID, name: name)
        if existed { await events.layerRemoved(.init(documentID: documentID, name: name)) }
        return existed
    }

    func records(documentID: String, layer: String, kind: RecordKind?) async throws -> [StoredRecord] {
        try await base.records(documentID: documentID, layer: layer, kind: kind)
    }

    func record(documentID: String, layer: String, id: String) async throws -> StoredRecord? {
        try await base.record(documentID: documentID, layer: layer, id: id)
    }

    func changes(documentID: String, layer: String, since revision: Int64) async throws -> LayerChanges {
        try await base.changes(documentID: documentID, layer: layer, since: revision)
    }

    func apply(
        _ changes: [RecordChange],
        documentID: String,
        layer: String,
        push: ClientPush?,
        onConditionFailure: ConditionFailurePolicy
    ) async throws -> CommitResult {
        let result = try await base.apply(
            changes, documentID: documentID, layer: layer, push: push, onConditionFailure: onConditionFailure)
        if !result.applied.isEmpty {
            await events.revisionChanged(.init(documentID: documentID, name: layer), to: result.revision)
        }
        return result
    }

    func apply<Outcome: Sendable>(
        documentID: String,
        layer: String,
        push: ClientPush?,
        deciding decide: @escaping @Sendable (any LayerTransactionReader) throws -> LayerDecision<Outcome>
    ) async throws -> (result: CommitResult, outcome: Outcome?) {
        let answer = try await base.apply(documentID: documentID, layer: layer, push: push, deciding: decide)
        if !answer.result.applied.isEmpty {
            await events.revisionChanged(.init(documentID: documentID, name: layer), to: answer.result.revision)
        }
        return answer
    }

    func lastPushID(documentID: String, layer: String, client: ClientIdentity) async throws -> Int64? {
        try await base.lastPushID(documentID: documentID, layer: layer, client: client)
    }

    func putAttachment(documentID: String, data: Data, contentType: String) async throws -> String {
        try await base.putAttachment(documentID: documentID, data: data, contentType: contentType)
    }

    func attachment(documentID: String, sha256: String) async throws -> StoredAttachment? {
        try await base.attachment(documentID: documentID, sha256: sha256)
    }

    func revokeTokens(ids: [String]) async throws {
        try await base.revokeTokens(ids: ids)
        await events.tokensRevoked(ids)
    }

    func isTokenRevoked(id: String) async throws -> Bool { try await base.isTokenRevoked(id: id) }
}
