import Foundation
import InstantJSON
import NIOCore
import Prometheus
import Synchronization

/// The realtime side of the server: wakes the listeners of a layer when its revision goes up,
/// keeps the list of users listening on each layer (presence), cuts off revoked tokens and holds
/// every listener within the limits of ``ListeningLimits``.
///
/// Listeners are woken, not sent messages: a listener reads
/// ``LayerEvents/state(of:listener:changesAfter:)`` when woken, so any number of changes between two
/// wake-ups coalesce into one. For listeners that asked for records, the events keep the change
/// messages of the layer's recent commits made on this node (each encoded once, ``ChangeMessage``)
/// until every such listener is past them, and a listener reads those after its revision with its
/// state. Presence changes are published at most once per ``ListeningLimits/presenceInterval`` per
/// layer, so clients joining and leaving in a burst cost each listener one message, not one per
/// change.
///
/// On several server nodes sharing one database, the storage reports this node's commits and the
/// ``NodeRelay`` those of the other nodes; presence lists the listeners of every node: this node
/// sends its own users of a layer on ``localPresence`` whenever they change, and takes the other
/// nodes' through ``nodeReported(_:on:presence:validFor:)``.
public actor LayerEvents {
    /// A layer of a document.
    public struct Layer: Hashable, Sendable {
        public var documentID: String
        public var name: String

        public init(documentID: String, name: String) {
            self.documentID = documentID
            self.name = name
        }
    }

    /// One entry of a layer's presence list: a user and how many listening connections they have.
    ///
    /// Presence never names clients: a client id keys a client's exactly-once state, so it stays
    /// between the client and the server.
    public struct Presence: Hashable, Sendable {
        /// The user (`user_id` of the tokens), or `nil` for tokens without one.
        public var userID: String?
        /// How many listening connections the user has on the layer.
        public var connections: Int
    }

    /// What a listener sees when woken.
    public struct State: Sendable {
        /// The newest revision known to this process, or `nil` if none was reported yet.
        public var revision: Int64?
        /// The users listening on the layer, by user id (`nil`, anonymous, first).
        public var presence: [Presence]
        /// Goes up whenever ``presence`` is published anew, so listeners compare one number.
        public var presenceVersion: Int
        /// ``presence`` as the message listening WebSockets send, `{"presence": [...]}`, encoded
        /// once per publication for all of them.
        var presenceMessage: ByteBuffer
        /// Whether the listener's token was revoked.
        public var isRevoked: Bool
        /// The change messages of the commits after the revision the listener asked from, in order,
        /// as far as this node has them one after the other (none when it has not the first).
        var changes: [ChangeMessage] = []

        /// Adds what a later state of the same listener says: its change messages after these
        /// (none at all once there would be more than `maximumChanges`: the listener is then told
        /// the revision, and pulls), and its revision, presence and revocation.
        mutating func append(_ later: State, keepingAtMost maximumChanges: Int) {
            changes += later.changes
            if changes.count > maximumChanges { changes = [] }
            if let laterRevision = later.revision { revision = max(revision ?? laterRevision, laterRevision) }
            presence = later.presence
            presenceVersion = later.presenceVersion
            presenceMessage = later.presenceMessage
            isRevoked = isRevoked || later.isRevoked
        }
    }

    /// Why a listener was not admitted.
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        /// What a client should be told.
        public var reason: String
        public var description: String { reason }
    }

    private struct Listener {
        var layer: Layer
        /// Whether the listener shows in presence, as its token's user.
        var isVisible: Bool
        var userID: String?
        var tokenKey: String
        var tokenID: String?
        /// Wakes the listener; cheap and never blocking (the actor calls it).
        var wake: Wake
        /// Ends a listener that reads its wake-ups from a stream.
        var end: (@Sendable () -> Void)?
        var isRevoked = false
        /// The revision the listener last read changes after, when it receives records.
        var recordsSeen: Int64?
    }

    /// How a listener is woken.
    private enum Wake {
        /// A signal: the listener reads its state.
        case signal(@Sendable () -> Void)
        /// Its state, handed over on its event loop.
        case notify(any EventLoop, @Sendable (State) -> Void)

        /// The transport of the listeners woken this way: a long poll waits for a signal, a
        /// listening WebSocket is handed its state.
        var transport: ServerMetrics.ListenerTransport {
            switch self {
            case .signal: .longPoll
            case .notify: .webSocket
            }
        }
    }

    private struct PublishedPresence {
        var version = 0
        var entries: [Presence] = []
        var message = PublishedPresence.message(of: [])
        /// This node's share of ``entries``, as last sent on ``localPresence``.
        var localEntries: [Presence] = []
        var publishedAt: ContinuousClock.Instant?
        var isFlushScheduled = false

        /// `{"presence": [{"userId", "connections"}, ...]}`
        static func message(of entries: [Presence]) -> ByteBuffer {
            let list = entries.map { entry -> JSONValue in
                ["userId": .optional(entry.userID), "connections": .integer(Int64(entry.connections))]
            }
            return ByteBuffer(bytes: JSONValue.object(["presence": .array(list)]).serialized())
        }
    }

    /// The presence another node reported for a layer, until it expires unless reported again.
    private struct NodePresence {
        var entries: [Presence]
        var expiresAt: ContinuousClock.Instant
    }

    let limits: ListeningLimits
    private var nodePresence: [Layer: [String: NodePresence]] = [:]
    private let localPresenceContinuation: AsyncStream<(Layer, [Presence])>.Continuation
    /// This node's own users of a layer, each time they change (an empty list when the layer's last
    /// listener left), for the other nodes. Nobody needs to read it on a single node.
    public nonisolated let localPresence: AsyncStream<(Layer, [Presence])>
    private var revisions: [Layer: Int64] = [:]
    private var listeners: [UUID: Listener] = [:]
    private var listenersByLayer: [Layer: Set<UUID>] = [:]
    private var listenerCountByToken: [String: Int] = [:]
    private var presence: [Layer: PublishedPresence] = [:]
    private var changeLogs: [Layer: ChangeLog] = [:]
    /// The listeners whose token was revoked, readable without a hop to the actor (every sync
    /// request on a WebSocket asks).
    private let revokedListeners = Mutex<Set<UUID>>([])
    /// How many listeners of each layer receive records (layers with none are left out), readable
    /// without a hop to the actor: the commits of a layer none of them listens to are not encoded
    /// as change messages.
    private let recordListenerCounts = Mutex<[Layer: Int]>([:])
    /// Who waits for the last listener to stop (``untilNoListeners(waitingAtMost:)``).
    private var waitingForNoListeners: [UUID: CheckedContinuation<Void, Never>] = [:]

    /// Where the listeners are counted, and the messages of listening WebSockets.
    nonisolated let metrics: ServerMetrics

    /// Creates the events of one server process.
    public init(
        limits: ListeningLimits = ListeningLimits(),
        metrics: ServerMetrics = ServerMetrics(registry: PrometheusCollectorRegistry())
    ) {
        self.limits = limits
        self.metrics = metrics
        (localPresence, localPresenceContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(10_000))
    }

    /// Reports that a layer reached a revision; its listeners wake up.
    public func revisionChanged(_ layer: Layer, to revision: Int64) {
        guard revision > (revisions[layer] ?? -1) else { return }
        revisions[layer] = revision
        wakeAll(on: layer)
    }

    /// Reports what commits made on this node wrote: each commit's change message is kept for the
    /// layer's listeners that receive records, and the listeners wake up.
    func recordsCommitted(_ messages: [(Layer, ChangeMessage)]) {
        var newest: [Layer: Int64] = [:]
        // The oldest revision a layer's listeners that receive records have, once per layer (a
        // group's commits come one message each).
        var oldestSeen: [Layer: Int64?] = [:]
        for (layer, message) in messages {
            newest[layer] = max(newest[layer] ?? message.revision, message.revision)
            let oldest: Int64?
            if let known = oldestSeen[layer] {
                oldest = known
            } else {
                oldest = oldestRecordsSeen(on: layer)
                oldestSeen[layer] = oldest
            }
            guard let oldest else { continue }
            changeLogs[layer, default: ChangeLog()].append(
                message, after: oldest, maximumBytes: ChangeLog.retainedMessageSizes * limits.maximumChangeMessageSize)
        }
        // A group's commits wake each listener once, with all their change messages.
        for (layer, revision) in newest { revisionChanged(layer, to: revision) }
    }

    /// The oldest revision the listeners of `layer` that receive records have, if any does.
    private func oldestRecordsSeen(on layer: Layer) -> Int64? {
        var oldest: Int64?
        for id in listenersByLayer[layer] ?? [] {
            guard let index = listeners.index(forKey: id), let seen = listeners.values[index].recordsSeen else {
                continue
            }
            oldest = min(oldest ?? seen, seen)
        }
        return oldest
    }

    /// Reports that a layer was deleted (or its document): its revision and recent changes are
    /// forgotten and its listeners wake up.
    public func layerRemoved(_ layer: Layer) {
        revisions[layer] = nil
        changeLogs[layer] = nil
        wakeAll(on: layer)
    }

    /// Reports revoked token ids: their listeners wake up and see ``State/isRevoked``.
    public func tokensRevoked(_ ids: [String]) {
        let revoked = Set(ids)
        var notifications = Notifications()
        for (id, listener) in listeners where listener.tokenID.map(revoked.contains) == true {
            listeners[id]?.isRevoked = true
            revokedListeners.withLock { _ = $0.insert(id) }
            wake(id, into: &notifications)
        }
        notifications.send()
    }

    /// Whether one more listener with this token would be admitted on the layer (see
    /// ``listen(on:token:isVisible:)``): the reason it would not, or `nil`.
    public func admissionProblem(on layer: Layer, token: ClientToken) -> Refusal? {
        if (listenerCountByToken[token.key] ?? 0) >= limits.maximumListenersPerToken {
            return Refusal(
                reason: "This token already has \(limits.maximumListenersPerToken) listening connections, the limit "
                    + "(--max-listeners-per-token); close one before opening another."
            )
        }
        if (listenersByLayer[layer]?.count ?? 0) >= limits.maximumListenersPerLayer {
            return Refusal(
                reason: "The layer already has \(limits.maximumListenersPerLayer) listening connections, the limit "
                    + "(--max-listeners-per-layer); try again later."
            )
        }
        return nil
    }

    /// Starts listening on a layer.
    /// - Parameters:
    ///   - token: The listener's token: its user shows in presence, its `jti` cuts it off when
    ///     revoked, and it counts against ``ListeningLimits/maximumListenersPerToken``.
    ///   - isVisible: Whether the listener shows in the presence list (WebSockets do, long-polls
    ///     do not).
    ///   - since: For a listener that receives records, the revision it has: the change messages
    ///     after it are kept for it.
    /// - Returns: The listener's id (for ``state(of:listener:changesAfter:)`` and ``stopListening(_:)``) and the
    ///   wake-ups, coalesced: however many events happen while the listener is busy, it wakes once.
    /// - Throws: ``Refusal`` when the token or the layer has as many listeners as allowed.
    public func listen(on layer: Layer, token: ClientToken, isVisible: Bool, recordsAfter since: Int64? = nil)
        throws(Refusal) -> (id: UUID, wakeUps: AsyncStream<Void>)
    {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = try register(
            on: layer, token: token, isVisible: isVisible, recordsAfter: since, wake: .signal({ continuation.yield() }),
            end: { continuation.finish() })
        return (id, stream)
    }

    /// Starts listening on a layer, as ``listen(on:token:isVisible:recordsAfter:)``, for a listener
    /// without a task of its own: whenever something happens on the layer, `notify` is called on
    /// `loop` (the listener's event loop) with the listener's state (for a listener that receives
    /// records, the change messages after the last revision it read or was notified of). The
    /// listeners of one loop woken together are notified by one task of that loop. A listener that
    /// could not use a state (its client was not taking more) reads it again with
    /// ``state(of:listener:changesAfter:)``.
    public func listen(
        on layer: Layer, token: ClientToken, isVisible: Bool, recordsAfter since: Int64? = nil,
        notifyingOn loop: any EventLoop, notify: @escaping @Sendable (State) -> Void
    ) throws(Refusal) -> UUID {
        try register(
            on: layer, token: token, isVisible: isVisible, recordsAfter: since, wake: .notify(loop, notify), end: nil)
    }

    private func register(
        on layer: Layer, token: ClientToken, isVisible: Bool, recordsAfter since: Int64?,
        wake: Wake, end: (@Sendable () -> Void)?
    ) throws(Refusal) -> UUID {
        if let refusal = admissionProblem(on: layer, token: token) { throw refusal }
        let id = UUID()
        listeners[id] = Listener(
            layer: layer, isVisible: isVisible, userID: token.userID, tokenKey: token.key, tokenID: token.tokenID,
            wake: wake, end: end, recordsSeen: since)
        listenersByLayer[layer, default: []].insert(id)
        if since != nil { countRecordListeners(on: layer, by: 1) }
        listenerCountByToken[token.key, default: 0] += 1
        metrics.listenerCount(wake.transport, changedBy: 1)
        if isVisible { presenceChanged(on: layer) }
        return id
    }

    private func countRecordListeners(on layer: Layer, by change: Int) {
        recordListenerCounts.withLock { counts in
            let count = (counts[layer] ?? 0) + change
            counts[layer] = count > 0 ? count : nil
        }
    }

    /// Whether a listener of `layer` receives records (a listener that starts to meanwhile misses
    /// what commits before it did, and pulls: see ``ChangeLog/messages(after:)``).
    nonisolated func hasRecordListeners(on layer: Layer) -> Bool {
        recordListenerCounts.withLock { $0[layer] != nil }
    }

    /// Returns once no listener is left, or after `limit`: the server shuts down, and its
    /// listening WebSockets are closing (``ListeningWebSocketHandler``).
    public func untilNoListeners(waitingAtMost limit: Duration) async {
        guard !listeners.isEmpty else { return }
        let waiter = UUID()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForNoListeners(waiter) }
            group.addTask {
                try? await Task.sleep(for: limit)
                await self.stopWaitingForNoListeners(waiter)
            }
            await group.next()
            group.cancelAll()
            self.stopWaitingForNoListeners(waiter)
        }
    }

    private func waitForNoListeners(_ waiter: UUID) async {
        await withCheckedContinuation { continuation in
            if listeners.isEmpty { continuation.resume() } else { waitingForNoListeners[waiter] = continuation }
        }
    }

    private func stopWaitingForNoListeners(_ waiter: UUID) {
        waitingForNoListeners.removeValue(forKey: waiter)?.resume()
    }

    /// Stops a listener; the others on its layer see the presence change.
    public func stopListening(_ id: UUID) {
        guard let listener = listeners.removeValue(forKey: id) else { return }
        metrics.listenerCount(listener.wake.transport, changedBy: -1)
        if listener.isRevoked { revokedListeners.withLock { _ = $0.remove(id) } }
        listener.end?()
        listenersByLayer[listener.layer]?.remove(id)
        if listener.recordsSeen != nil { countRecordListeners(on: listener.layer, by: -1) }
        let remaining = (listenerCountByToken[listener.tokenKey] ?? 1) - 1
        listenerCountByToken[listener.tokenKey] = remaining > 0 ? remaining : nil
        if !(listenersByLayer[listener.layer] ?? []).contains(where: { listeners[$0]?.recordsSeen != nil }) {
            changeLogs[listener.layer] = nil
        }
        if listenersByLayer[listener.layer]?.isEmpty == true {
            listenersByLayer[listener.layer] = nil
            if presence.removeValue(forKey: listener.layer)?.localEntries.isEmpty == false {
                localPresenceContinuation.yield((listener.layer, []))
            }
        } else if listener.isVisible {
            presenceChanged(on: listener.layer)
        }
        if listeners.isEmpty {
            for waiter in waitingForNoListeners.values { waiter.resume() }
            waitingForNoListeners = [:]
        }
    }

    /// What a listener should know now; with `seen`, the revision a listener that receives records
    /// has, the change messages after it too.
    public func state(of layer: Layer, listener id: UUID, changesAfter seen: Int64? = nil) -> State {
        var state = sharedState(of: layer)
        if let seen, let index = listeners.index(forKey: id) {
            if listeners.values[index].recordsSeen == nil {
                countRecordListeners(on: listeners.values[index].layer, by: 1)
            }
            listeners.values[index].recordsSeen = seen
            state.changes = changeLogs[layer]?.messages(after: seen) ?? []
        }
        state.isRevoked = listeners[id]?.isRevoked ?? false
        return state
    }

    /// What every listener of a layer is told alike: its revision and presence (not revoked, no
    /// change messages).
    private func sharedState(of layer: Layer) -> State {
        let current = presence[layer]
        return State(
            revision: revisions[layer],
            presence: current?.entries ?? [],
            presenceVersion: current?.version ?? 0,
            presenceMessage: current?.message ?? PublishedPresence.message(of: []),
            isRevoked: false
        )
    }

    /// Whether a listener's token was revoked while it listened.
    public nonisolated func isRevoked(_ id: UUID) -> Bool { revokedListeners.withLock { $0.contains(id) } }

    /// The number of listeners on all layers.
    public var listenerCount: Int { listeners.count }

    /// Publishes the layer's presence now if the last publication is at least
    /// ``ListeningLimits/presenceInterval`` old, otherwise once that much time has passed.
    private func presenceChanged(on layer: Layer) {
        var published = presence[layer] ?? PublishedPresence()
        guard !published.isFlushScheduled else { return }
        let now = ContinuousClock.now
        if let last = published.publishedAt, now < last + limits.presenceInterval {
            published.isFlushScheduled = true
            presence[layer] = published
            let due = last + limits.presenceInterval
            Task { [weak self] in
                try? await Task.sleep(until: due, clock: .continuous)
                await self?.publishPresence(on: layer)
            }
        } else {
            presence[layer] = published
            publishPresence(on: layer)
        }
    }

    private func publishPresence(on layer: Layer) {
        guard var published = presence[layer] else { return }
        var local: [String?: Int] = [:]
        for id in listenersByLayer[layer] ?? [] {
            guard let listener = listeners[id], listener.isVisible else { continue }
            local[listener.userID, default: 0] += 1
        }
        let localEntries = Self.entries(local)
        if localEntries != published.localEntries {
            published.localEntries = localEntries
            localPresenceContinuation.yield((layer, localEntries))
        }
        var counts = local
        let now = ContinuousClock.now
        for node in (nodePresence[layer] ?? [:]).values where node.expiresAt > now {
            for entry in node.entries { counts[entry.userID, default: 0] += entry.connections }
        }
        let entries = Self.entries(counts)
        published.isFlushScheduled = false
        published.publishedAt = now
        if entries != published.entries || published.version == 0 {
            published.entries = entries
            published.message = PublishedPresence.message(of: entries)
            published.version += 1
            presence[layer] = published
            wakeAll(on: layer)
        } else {
            presence[layer] = published
        }
    }

    /// Presence entries from counts by user: anonymous users first, then by user id.
    private static func entries(_ counts: [String?: Int]) -> [Presence] {
        counts.map { Presence(userID: $0.key, connections: $0.value) }.sorted(by: presenceOrder)
    }

    // MARK: Several nodes

    /// Takes another node's users of a layer (an empty list when it has none left); they count in
    /// this node's presence until `validFor` has passed without the node reporting them again.
    public func nodeReported(_ node: String, on layer: Layer, presence entries: [Presence], validFor: Duration) {
        if entries.isEmpty {
            guard nodePresence[layer]?.removeValue(forKey: node) != nil else { return }
            if nodePresence[layer]?.isEmpty == true { nodePresence[layer] = nil }
        } else {
            let previous = nodePresence[layer]?[node]?.entries
            nodePresence[layer, default: [:]][node] = NodePresence(
                entries: entries, expiresAt: ContinuousClock.now + validFor)
            guard previous != entries else { return }
        }
        if listenersByLayer[layer] != nil { presenceChanged(on: layer) }
    }

    /// Forgets what other nodes reported and did not renew in time (a node that stopped or lost
    /// its connection to the others), and publishes the layers whose presence changed.
    public func expireNodePresence() {
        let now = ContinuousClock.now
        for (layer, nodes) in nodePresence {
            let live = nodes.filter { $0.value.expiresAt > now }
            guard live.count != nodes.count else { continue }
            nodePresence[layer] = live.isEmpty ? nil : live
            if listenersByLayer[layer] != nil { presenceChanged(on: layer) }
        }
    }

    /// This node's users of every layer it has visible listeners on, as last published: what it
    /// reports again periodically so that the other nodes' copies do not expire.
    public func localPresenceSnapshot() -> [(Layer, [Presence])] {
        presence.compactMap { layer, published in
            published.localEntries.isEmpty ? nil : (layer, published.localEntries)
        }
    }

    /// The layers this node has listeners on: what to check against the database after
    /// notifications from other nodes may have been missed.
    public func listenedLayers() -> [Layer] {
        Array(listenersByLayer.keys)
    }

    /// The token ids (`jti`) of this node's listeners.
    public func listenedTokenIDs() -> Set<String> {
        Set(listeners.values.compactMap(\.tokenID))
    }

    private static func presenceOrder(_ first: Presence, _ second: Presence) -> Bool {
        switch (first.userID, second.userID) {
        case (nil, nil), (_, nil): false
        case (nil, _): true
        case (let a?, let b?): a < b
        }
    }

    private func wakeAll(on layer: Layer) {
        guard let ids = listenersByLayer[layer] else { return }
        var notifications = Notifications()
        // What the listeners share is looked up once, not once per listener.
        let (shared, log) = (sharedState(of: layer), changeLogs[layer])
        for id in ids { wake(id, shared: shared, log: log, into: &notifications) }
        notifications.send()
    }

    /// The states to hand to listeners, by event loop: each loop runs one task for all of its
    /// listeners, instead of being woken once per listener.
    private struct Notifications {
        private var byLoop: [ObjectIdentifier: (loop: any EventLoop, states: [(@Sendable (State) -> Void, State)])] =
            [:]

        mutating func add(_ state: State, to notify: @escaping @Sendable (State) -> Void, on loop: any EventLoop) {
            byLoop[ObjectIdentifier(loop), default: (loop, [])].states.append((notify, state))
        }

        func send() {
            for (loop, states) in byLoop.values {
                loop.execute { for (notify, state) in states { notify(state) } }
            }
        }
    }

    /// Wakes a listener: a signal, or its state (its change messages after the last revision it
    /// read or was notified of, which becomes the last one it was notified of).
    private func wake(_ id: UUID, into notifications: inout Notifications) {
        guard let layer = listeners[id]?.layer else { return }
        wake(id, shared: sharedState(of: layer), log: changeLogs[layer], into: &notifications)
    }

    /// Wakes a listener of the layer whose shared state and change log are given. The listener is
    /// read and updated where it is stored, not copied out (it holds a dozen references).
    private func wake(_ id: UUID, shared: State, log: ChangeLog?, into notifications: inout Notifications) {
        guard let index = listeners.index(forKey: id) else { return }
        switch listeners.values[index].wake {
        case .signal(let signal):
            signal()
        case .notify(let loop, let notify):
            var state = shared
            state.isRevoked = listeners.values[index].isRevoked
            if let seen = listeners.values[index].recordsSeen {
                // The listener may have been told a later revision than the actor knows (by an
                // answer, or a revision without records): it picks what follows its own.
                state.changes = Array(log?.messages(newerThan: seen) ?? [])
                if let last = state.changes.last?.revision { listeners.values[index].recordsSeen = last }
            }
            notifications.add(state, to: notify, on: loop)
        }
    }
}
