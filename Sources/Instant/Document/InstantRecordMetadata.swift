/// What the server says about a record beside its content: its group, who created it and who
/// changed it last, as the server's sync answers carry them (docs/PROTOCOL.md, "Records on the
/// wire"). The server sets these; the app reads them.
public struct InstantRecordMetadata: Sendable, Hashable {
    /// The record's group (collaboration permissions); `nil` when it has none.
    public var group: String?
    /// The `user_id` of the token that created the record; `nil` when unknown (records that came
    /// from the PDF, or made by tokens without a user).
    public var createdBy: String?
    /// The `user_id` of the token that changed the record last; `nil` when unknown.
    public var updatedBy: String?
    /// The layer revision of the record's last change on the server.
    public var revision: Int64

    /// Creates metadata.
    public init(group: String?, createdBy: String?, updatedBy: String?, revision: Int64) {
        self.group = group
        self.createdBy = createdBy
        self.updatedBy = updatedBy
        self.revision = revision
    }
}

extension InstantDocument {
    /// The server's metadata of the record (annotation, comment, form field value, bookmark) with
    /// the given identifier, as of the last sync.
    ///
    /// Local changes not synced yet are not reflected: a record created here has no metadata until
    /// the server answered its push, and a group set here shows once the server took it.
    /// - Returns: `nil` if the server does not have the record (yet, or any more).
    /// - Throws: ``InstantError/Code/notDownloaded`` until the download finished.
    public func serverMetadata(forRecordWithIdentifier identifier: String) throws -> InstantRecordMetadata? {
        let (descriptor, _) = try ready()
        return try descriptor.store.serverMetadata(
            documentID: descriptor.identifier, layer: descriptor.layerName, id: identifier)
    }

    /// The server's metadata of an annotation, as of the last sync (see
    /// ``serverMetadata(forRecordWithIdentifier:)``).
    /// - Returns: `nil` if the server does not have the annotation, or it has no identifier.
    public func serverMetadata(for annotation: Annotation) throws -> InstantRecordMetadata? {
        guard let id = annotation.id else { return nil }
        return try serverMetadata(forRecordWithIdentifier: id)
    }
}
