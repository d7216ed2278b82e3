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
        /// Goes up whenever ``members`` changes, so listeners compare one number, not the list.
        public var membersVersion: Int
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
    /// The presence list of each layer, computed when it changes (not on every wake-up).
    private var presence: [Layer: (version: Int, members: [Member])] = [:]

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
        if member != nil { membersChanged(on: layer) }
        return (id, stream)
    }

    /// Stops a listener; the others on its layer see the presence change.
    public func stopListening(_ id: UUID) {
        guard let listener = listeners.removeValue(forKey: id) else { return }
        listener.wake.finish()
        listenersByLayer[listener.layer]?.remove(id)
        if listenersByLayer[listener.layer]?.isEmpty == true {
            listenersByLayer[listener.layer] = nil
            presence[listener.layer] = nil
        }
        if listener.member != nil { membersChanged(on: listener.layer) }
    }

    /// What a listener should know now.
    public func state(of layer: Layer, listener id: UUID) -> State {
        let current = presence[layer]
        return State(
            revision: revisions[layer],
            members: current?.members ?? [],
            membersVersion: current?.version ?? 0,
            isRevoked: listeners[id]?.isRevoked ?? false
        )
    }

    /// The number of listeners on all layers.
    public var listenerCount: Int { listeners.count }

    private func membersChanged(on layer: Layer) {
        var seen: Set<Member> = []
        let members = (listenersByLayer[layer] ?? []).compactMap { listeners[$0]?.member }
            .filter { seen.insert($0).inserted }
            .sorted { ($0.clientID, $0.userID ?? "") < ($1.clientID, $1.userID ?? "") }
        if members != presence[layer]?.members {
            presence[layer] = ((presence[layer]?.version ?? 0) + 1, members)
        }
        wakeAll(on: layer)
    }

    private func wakeAll(on layer: Layer) {
        for id in listenersByLayer[layer] ?? [] { listeners[id]?.wake.yield() }
    }
}
