/// How `POST /api/documents` with a `url` fetches the document.
///
/// The URL comes from the backend (the route needs the API token), but the server fetches it from
/// where it runs: restrict ``allowedHosts`` when that network holds services the backend must not
/// reach through the server.
public struct DocumentDownloadConfiguration: Sendable, Hashable {
    /// Whether documents can be added from a URL at all.
    public var isEnabled: Bool
    /// The longest a download may take, from the request to the last byte.
    public var timeout: Duration
    /// The largest file accepted, in bytes; `nil` takes the backend API's body limit, so that a
    /// file is accepted by URL exactly when it is accepted as an upload.
    public var maxBytes: Int?
    /// The hosts documents may come from (exact names, compared without case); `nil` allows every
    /// host.
    public var allowedHosts: Set<String>?

    /// Creates a configuration: enabled, 30 s, the body limit, every host.
    public init(
        isEnabled: Bool = true, timeout: Duration = .seconds(30), maxBytes: Int? = nil, allowedHosts: Set<String>? = nil
    ) {
        self.isEnabled = isEnabled
        self.timeout = timeout
        self.maxBytes = maxBytes
        self.allowedHosts = allowedHosts
    }
}
