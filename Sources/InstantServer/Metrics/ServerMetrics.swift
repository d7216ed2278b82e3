import Prometheus

/// The server's measures of its own work, in the registry that `/metrics` serves beside the HTTP
/// requests (``MetricsMiddleware``): the group transactions of layers and what they commit, the
/// listeners, and the messages the listening WebSockets send. README.md, "Metrics", lists them.
///
/// Every instrument is made once, when the server starts: recording is an atomic operation, with no
/// look-up in the registry. Two `ServerMetrics` of one registry share its instruments.
public struct ServerMetrics: Sendable {
    private let groupCommits: [GroupCommitReport.Path: Counter]
    private let groupsRanAgain: Counter
    private let commitsPerGroup: ValueHistogram
    private let groupDuration: DurationHistogram
    private let layerCommits: Counter
    private let recordsCommitted: Counter
    private let tokensRevoked: Counter
    private let listeners: [ListenerTransport: Gauge]
    private let listenerMessages: [ListenerMessage: Counter]
    private let socketSyncRequests: DurationHistogram
    private let nodeMessages: [NodeMessageKind: Counter]
    private let nodeChannelReconnections: Counter

    /// How a listener waits for changes.
    public enum ListenerTransport: String, Sendable, CaseIterable {
        /// A listening WebSocket.
        case webSocket = "websocket"
        /// A long poll (`GET .../listen` without an upgrade), while it waits.
        case longPoll = "long_poll"
    }

    /// What a listening WebSocket sends.
    public enum ListenerMessage: String, Sendable, CaseIterable {
        /// The records of a commit (`{"revision", "since", "records"}`), applied without a request.
        case records
        /// A layer's revision alone: the client pulls (it asked for no records, it was at another
        /// revision, or the commit's message was over the size limit).
        case revision
        /// Who listens on the layer.
        case presence
    }

    /// What a node hears from the nodes that share its database.
    public enum NodeMessageKind: String, Sendable, CaseIterable {
        /// A commit, a deleted layer or revoked tokens.
        case commit
        /// The listeners of a node on a layer.
        case presence
    }

    /// The instruments of `registry`.
    public init(registry: PrometheusCollectorRegistry) {
        func name(_ name: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
            MetricNameDescriptor(namespace: "instant", metricName: name, unitName: unit, helpText: help)
        }
        let groups = name(
            "group_commits", "total",
            "Group transactions of layers committed, by how they made sure they saw the layer as its last writer left it."
        )
        groupCommits = Self.each("path") { registry.makeCounter(descriptor: groups, labels: $0) }
        groupsRanAgain = registry.makeCounter(
            descriptor: name(
                "group_commits_ran_again", "total",
                "Group transactions that found another node's write to the layer and ran again."))
        commitsPerGroup = registry.makeValueHistogram(
            descriptor: name("group_commit_size", "commits", "Commits (pushes and REST writes) per group transaction."),
            buckets: [1, 2, 4, 8, 16, 32, 64, 128])
        groupDuration = registry.makeDurationHistogram(
            descriptor: name(
                "group_commit_duration", "seconds",
                "Time from a group transaction's start to its commit, waiting for the layer's lock included."),
            buckets: [
                .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
                .milliseconds(25), .milliseconds(100), .milliseconds(500), .seconds(2),
            ])
        layerCommits = registry.makeCounter(
            descriptor: name("layer_commits", "total", "Commits that changed a layer's records (each a new revision)."))
        recordsCommitted = registry.makeCounter(
            descriptor: name(
                "records_committed", "total", "Records written by those commits (tombstones of deletions included)."))
        tokensRevoked = registry.makeCounter(
            descriptor: name("tokens_revoked", "total", "Token ids revoked through this node (POST /api/revoke)."))
        let open = name("listeners", "open", "Listeners waiting for changes on this node.")
        listeners = Self.each("transport") { registry.makeGauge(descriptor: open, labels: $0) }
        let sent = name("listener_messages", "total", "Messages sent on listening WebSockets, by kind.")
        listenerMessages = Self.each("kind") { registry.makeCounter(descriptor: sent, labels: $0) }
        socketSyncRequests = registry.makeDurationHistogram(
            descriptor: name(
                "socket_sync_request_duration", "seconds",
                "Sync requests answered on listening WebSockets, from their turn to their answer."),
            buckets: [
                .milliseconds(1), .milliseconds(5), .milliseconds(25), .milliseconds(100), .milliseconds(500),
                .seconds(2),
            ])
        let heard = name(
            "node_messages", "total", "Messages from the nodes that share the database (this node's own included).")
        nodeMessages = Self.each("kind") { registry.makeCounter(descriptor: heard, labels: $0) }
        nodeChannelReconnections = registry.makeCounter(
            descriptor: name(
                "node_channel_reconnections", "total",
                "Times the channel between the nodes came back after it was down (the node then reads what it missed).")
        )
    }

    /// One instrument of a family for each case of `Value`, made by `make` with the labels that
    /// name the case under `label`.
    private static func each<Value: CaseIterable & RawRepresentable & Hashable, Instrument>(
        _ label: String, _ make: ([(String, String)]) -> Instrument
    ) -> [Value: Instrument] where Value.RawValue == String {
        Dictionary(uniqueKeysWithValues: Value.allCases.map { ($0, make([(label, $0.rawValue)])) })
    }

    /// A listener started (`by: 1`) or stopped (`by: -1`) waiting.
    func listenerCount(_ transport: ListenerTransport, changedBy change: Int) {
        listeners[transport]?.increment(by: Double(change))
    }

    /// A listening WebSocket sent a message.
    func sent(_ message: ListenerMessage) {
        listenerMessages[message]?.increment()
    }

    /// A sync request on a listening WebSocket was answered, `duration` after its turn came.
    func answeredSocketSyncRequest(in duration: Duration) {
        socketSyncRequests.record(duration)
    }

    /// A message came from the nodes.
    func heard(_ message: NodeMessageKind) {
        nodeMessages[message]?.increment()
    }

    /// The channel between the nodes came back.
    func nodeChannelReconnected() {
        nodeChannelReconnections.increment()
    }
}

extension ServerMetrics: StorageObserver {
    /// Counts the commits and their records.
    public func recordsCommitted(_ changes: [LayerChangeSet]) async {
        layerCommits.increment(by: Int64(changes.count))
        recordsCommitted.increment(by: Int64(changes.reduce(0) { $0 + $1.records.count }))
    }

    /// Counts the token ids revoked.
    public func storageCommitted(_ events: [StorageEvent]) async {
        for case .tokensRevoked(let ids) in events { tokensRevoked.increment(by: Int64(ids.count)) }
    }

    /// Records how a group went.
    public func groupCommitted(_ report: GroupCommitReport) {
        groupCommits[report.path]?.increment()
        if report.ranAgain { groupsRanAgain.increment() }
        commitsPerGroup.record(Double(report.commits))
        groupDuration.record(report.duration)
    }
}
