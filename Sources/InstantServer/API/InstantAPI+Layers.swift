import Foundation
import Hummingbird

extension InstantAPI {
    /// `GET /api/documents/{id}/layers`: the names of the named layers.
    func listLayers(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let id = try documentID(context)
        _ = try await requireDocument(id)
        let layers = try await storage.layers(documentID: id)
        return Self.data(.array(layers.filter { !$0.name.isEmpty }.map { .string($0.name) }))
    }

    /// `POST /api/documents/{id}/layers` with `{"name": ..., "source_layer_name": ...}`.
    /// Without a source the layer starts from the document's base records.
    func createLayer(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let id = try documentID(context)
        _ = try await requireDocument(id)
        let body = try await jsonBody(request)
        guard let name = body["name"]?.stringValue else {
            throw APIError.badRequest("The body needs a 'name' string for the new layer.")
        }
        try Identifiers.validateLayerName(name)
        var source = LayerSource.baseRecords
        if let sourceName = body["source_layer_name"] {
            guard let sourceName = sourceName.stringValue else {
                throw APIError.badRequest("'source_layer_name' must be a string.")
            }
            if !sourceName.isEmpty { try Identifiers.validateLayerName(sourceName) }
            guard try await storage.layer(documentID: id, name: sourceName) != nil else {
                throw APIError.notFound("The document '\(id)' has no layer named '\(sourceName)' to copy.")
            }
            source = .layer(sourceName)
        }
        do {
            try await storage.createLayer(documentID: id, name: name, source: source)
        } catch let error as StorageError where error.code == .layerExists {
            throw APIError.badRequest(error.message)
        }
        return Self.data(["name": .string(name), "errors": []])
    }

    /// `DELETE /api/documents/{id}/layers/{name}`.
    func deleteLayer(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let id = try documentID(context)
        let name = try layerName(context)
        _ = try await requireDocument(id)
        guard try await storage.deleteLayer(documentID: id, name: name) else {
            throw APIError.notFound("The document '\(id)' has no layer named '\(name)'.")
        }
        return Self.data([:])
    }
}
