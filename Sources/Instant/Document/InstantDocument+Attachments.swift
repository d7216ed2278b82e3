import Foundation
import InstantJSON

extension InstantDocument {
    /// Stores binary data (an image) as an attachment of the document and returns the annotation
    /// referencing it (`imageAttachmentId` and `contentType` set); add or update that annotation to
    /// keep it. The attachment is uploaded before the next push that needs it.
    /// - Parameters:
    ///   - data: The bytes, e.g. a PNG or JPEG image.
    ///   - contentType: Their media type, e.g. `image/png`.
    ///   - annotation: An image annotation (`pspdfkit/image`) or a stamp.
    public func attach(_ data: Data, contentType: String, to annotation: Annotation) throws -> Annotation {
        let (descriptor, _) = try ready()
        guard isEditable else {
            throw InstantError(.readOnlyDocument, "This document is read-only; edit the descriptor's editableDocument.")
        }
        if let problem = Attachment.validateContentType(contentType) {
            throw InstantError(.invalidRecord, "The attachment's content type is not usable: \(problem)")
        }
        let id = try descriptor.store.putAttachment(
            data, contentType: contentType, documentID: descriptor.identifier, uploaded: false)
        var attached = annotation
        attached["imageAttachmentId"] = .string(id)
        attached["contentType"] = .string(contentType)
        return attached
    }

    /// The bytes and content type of an attachment of the document (from the local store, else
    /// downloaded from the server and kept).
    /// - Parameter identifier: The attachment's id (an annotation's `imageAttachmentId`).
    public func attachment(withIdentifier identifier: String) async throws -> (data: Data, contentType: String) {
        let (descriptor, _) = try ready()
        if let local = try descriptor.store.attachment(documentID: descriptor.identifier, id: identifier) {
            return (local.data, local.contentType)
        }
        guard let jwt = descriptor.lock.withLock({ descriptor.jwt }) else {
            throw InstantError(.authenticationFailed, "No JWT for this layer; call reauthenticate(withJWT:).")
        }
        let remote = try await descriptor.transport.downloadAttachment(
            documentID: descriptor.identifier, layer: descriptor.layerName, jwt: jwt, id: identifier)
        try descriptor.store.putAttachment(
            remote.data, contentType: remote.contentType, documentID: descriptor.identifier, uploaded: true)
        return remote
    }

    /// Writes an attachment's bytes to a file.
    /// - Returns: The attachment's content type.
    @discardableResult
    public func writeAttachment(withIdentifier identifier: String, to url: URL) async throws -> String {
        let attachment = try await attachment(withIdentifier: identifier)
        do {
            try attachment.data.write(to: url, options: .atomic)
        } catch {
            throw InstantError(.storageFailed, "Cannot write the attachment to \(url.path): \(error)")
        }
        return attachment.contentType
    }
}
