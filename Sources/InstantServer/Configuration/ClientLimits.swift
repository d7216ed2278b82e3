/// What one client (a JWT on the `/i/...` routes) can make the server hold or do. The backend API
/// (`/api/...`, API token) has its own, larger body limit
/// (``InstantServerConfiguration/maxBodySize``).
///
/// Every limit has a default meant for an internet-facing server and an `instant serve` option
/// (docs/SECURITY.md lists them).
public struct ClientLimits: Sendable {
    /// The largest body of `POST .../sync`, in bytes (default 8 MiB, `--max-sync-body-size`). The
    /// SDK splits its pending changes into pushes well below it.
    public var maxSyncBodySize: Int
    /// The largest attachment a client may upload, in bytes (default 32 MiB,
    /// `--max-client-attachment-size`).
    public var maxAttachmentSize: Int
    /// The largest record a client may store: its Instant JSON serialized, in bytes (default 1 MiB,
    /// `--max-record-size`). Every client of the layer downloads each record, so one large value
    /// costs everyone.
    public var maxRecordSize: Int
    /// The most changes one push may carry (default 5,000, `--max-changes-per-push`).
    public var maxChangesPerPush: Int
    /// Limits on listening connections.
    public var listening: ListeningLimits

    /// The largest message a client may send on a listening WebSocket: a sync request in its
    /// envelope (``maxSyncBodySize`` and 1 KiB). A larger message closes the WebSocket with 1009.
    public var maxSocketMessageSize: Int { maxSyncBodySize + 1024 }

    /// Creates client limits; the defaults are the documented ones.
    public init(
        maxSyncBodySize: Int = 8 * 1024 * 1024,
        maxAttachmentSize: Int = 32 * 1024 * 1024,
        maxRecordSize: Int = 1024 * 1024,
        maxChangesPerPush: Int = 5_000,
        listening: ListeningLimits = ListeningLimits()
    ) {
        self.maxSyncBodySize = maxSyncBodySize
        self.maxAttachmentSize = maxAttachmentSize
        self.maxRecordSize = maxRecordSize
        self.maxChangesPerPush = maxChangesPerPush
        self.listening = listening
    }
}

/// Limits on listening connections (WebSockets and long-polls of `.../listen`).
public struct ListeningLimits: Sendable {
    /// How many listening connections one token may hold at once (default 16,
    /// `--max-listeners-per-token`); a token is told apart by its `jti`, or by its text without one.
    public var maximumListenersPerToken: Int
    /// How many listening connections one layer may have on this server (default 1,000,
    /// `--max-listeners-per-layer`).
    public var maximumListenersPerLayer: Int
    /// The shortest time between two presence messages of a layer (default 1 s,
    /// `--presence-interval`): clients joining and leaving in a burst make one message.
    public var presenceInterval: Duration
    /// The largest change message a listening WebSocket that asked for records
    /// (`changes=records`) is sent for one commit, in bytes of JSON (default 256 KiB,
    /// `--max-change-message-size`). A commit whose records take more is announced by a plain
    /// `{"revision": M}`, and the clients pull it.
    public var maximumChangeMessageSize: Int

    /// Creates listening limits; the defaults are the documented ones.
    public init(
        maximumListenersPerToken: Int = 16,
        maximumListenersPerLayer: Int = 1_000,
        presenceInterval: Duration = .seconds(1),
        maximumChangeMessageSize: Int = 256 * 1024
    ) {
        self.maximumListenersPerToken = maximumListenersPerToken
        self.maximumListenersPerLayer = maximumListenersPerLayer
        self.presenceInterval = presenceInterval
        self.maximumChangeMessageSize = maximumChangeMessageSize
    }
}
