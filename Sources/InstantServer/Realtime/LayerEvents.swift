import Foundation

/// The realtime side of the server: wakes the listeners of a layer when its revision goes up,
/// keeps the list of clients listening on each layer (presence) and cuts off revoked tokens.
///
/// Listeners are woken, never sent data: a listener reads ``LayerEvents/state(of:listener:)`` when
/// woken, so any number of changes between two wake-ups coalesce into one. On several server
/// processes sharing one database, each process's storage reports its own commits; a shared
/// notification channel (PostgreSQL `LISTEN/NOTIFY`) would call ``revisionChanged(_:to:)`` too.
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

    /// A client listening on a layer, as others see it.
    public struct Member: Hashable, Sendable {
        /// The client's id (one per local store).
        public var clientID: String
        /// The user of the client's token, if any.
        public var userID: String?

        public init(clientID: String, userID: String?) {
            self.clientID = clientID
            self.userID = userID
        }
    }

    /// What a listener sees when woken.
    public struct State: Sendable, Equatable {
        /// The newest revision known to this process, or `nil` if none was reported yet.
        public var revision: Int64?
        /// The clients listening on the layer, by client id.
        public var members: [Member]
        /// Whether the listener's token was revoked.
        public var isRevoked: Bool
    }

    private struct Listener {
        var layer: Layer
        var member: Member?
        var tokenID: String?
        var wake: AsyncStream<Void>.Continuation
        var isRevoked = false
    }

    private var revisions: [Layer: Int64] = [:]
    private var listeners: [UUID: Listener] = [:]
    private var listenersByLayer: [Layer: Set<UUID>] = [:]

    public init() {}

    /// Reports that a layer reached a revision; its listeners wake up.
    public func revisionChanged(_ layer: Layer, to revision: Int64) {
        guard revision > (revisions[layer] ?? -1) else { return }
        revisions[layer] = revision
        wakeAll(on: layer)
    }

    /// Reports that a layer was deleted (or its document): its revision is forgotten and its
    /// listeners wake up.
    public func layerRemoved(_ layer: Layer) {
        revisions[layer] = nil
        wakeAll(on: layer)
    }

    /// Reports revoked token ids: their listeners wake up and see ``State/isRevoked``.
    public func tokensRevoked(_ ids: [String]) {
        let revoked = Set(ids)
        for (id, listener) in listeners where listener.tokenID.map(revoked.contains) == true {
            listeners[id]?.isRevoked = true
            listener.wake.yield()
        }
    }

    /// Starts listening on a layer.
    /// - Parameters:
    ///   - member: How the listener appears in the presence list; `nil` for listeners that do not
    ///     show (long-polls).
    ///   - tokenID: The `jti` of the listener's token, to cut it off when revoked.
    /// - Returns: The listener's id (for ``state(of:listener:)`` and ``stopListening(_:)``) and the
    ///   wake-ups, coalesced: however many events happen while the listener is busy, it wakes once.
    public func listen(on layer: Layer, as member: Member?, tokenID: String?) -> (
        id: UUID, wakeUps: AsyncStream<Void>
    ) {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        listeners[id] = Listener(layer: layer, member: member, tokenID: tokenID, wake: continuation)
        listenersByLayer[layer, default: []].insert(id)
        if member != nil { wakeAll(on: layer) }
        return (id, stream)
    }

    /// Stops a listener; the others on its layer see the presence change.
    public func stopListening(_ id: UUID) {
        guard let listener = listeners.removeValue(forKey: id) else { return }
        listener.wake.finish()
        listenersByLayer[listener.layer]?.remove(id)
        if listenersByLayer[listener.layer]?.isEmpty == true { listenersByLayer[listener.layer] = nil }
        if listener.member != nil { wakeAll(on: listener.layer) }
    }

    /// What a listener should know now.
    public func state(of layer: Layer, listener id: UUID) -> State {
        State(
            revision: revisions[layer],
            members: members(of: layer),
            isRevoked: listeners[id]?.isRevoked ?? false
        )
    }

    /// The number of listeners on all layers.
    public var listenerCount: Int { listeners.count }

    private func members(of layer: Layer) -> [Member] {
        var seen: Set<Member> = []
        return (listenersByLayer[layer] ?? []).compactMap { listeners[$0]?.member }
            .filter { seen.insert($0).inserted }
            .sorted { ($0.clientID, $0.userID ?? "") < ($1.clientID, $1.userID ?? "") }
    }

    private func wakeAll(on layer: Layer) {
        for id in listenersByLayer[layer] ?? [] { listeners[id]?.wake.yield() }
    }
}
