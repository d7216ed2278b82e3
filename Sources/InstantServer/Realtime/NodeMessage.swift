import Foundation
import InstantJSON

/// What server nodes that share one database tell each other: small wake-ups, never records (the
/// truth is in the database).
public enum NodeMessage: Sendable, Hashable {
    /// A transaction committed on some node (announced inside it, delivered when it commits).
    case committed(StorageEvent)
    /// A node's own users listening on a layer (empty when it has none left). Sent when they
    /// change and again periodically; copies that are not renewed expire.
    case presence(node: String, documentID: String, layer: String, entries: [LayerEvents.Presence])

    /// The most bytes a message may take once encoded: what one PostgreSQL notification carries,
    /// with room to spare.
    public static let maximumEncodedSize = 7_900

    /// The message as compact JSON, within ``maximumEncodedSize``: a list of revoked tokens too long
    /// for one message is split over several, and a node's presence keeps the users that fit (most
    /// connections first).
    public func encoded() -> [String] {
        switch self {
        case .committed(.revisionChanged(let documentID, let layer, let revision)):
            return [
                Self.text(["t": "revision", "d": .string(documentID), "l": .string(layer), "r": .integer(revision)])
            ]
        case .committed(.layerRemoved(let documentID, let layer)):
            return [Self.text(["t": "removed", "d": .string(documentID), "l": .string(layer)])]
        case .committed(.tokensRevoked(let ids)):
            var messages: [String] = []
            var batch: [JSONValue] = []
            var size = 0
            for id in ids {
                let cost = id.utf8.count * 6 + 3
                if size + cost > Self.maximumEncodedSize - 64, !batch.isEmpty {
                    messages.append(Self.text(["t": "revoked", "j": .array(batch)]))
                    batch = []
                    size = 0
                }
                batch.append(.string(id))
                size += cost
            }
            if !batch.isEmpty { messages.append(Self.text(["t": "revoked", "j": .array(batch)])) }
            return messages
        case .presence(let node, let documentID, let layer, let entries):
            var kept = entries.sorted { $0.connections > $1.connections }
            while true {
                let text = Self.text([
                    "t": "presence", "n": .string(node), "d": .string(documentID), "l": .string(layer),
                    "u": .array(
                        kept.map { [$0.userID.map(JSONValue.string) ?? .null, .integer(Int64($0.connections))] }),
                ])
                if text.utf8.count <= Self.maximumEncodedSize || kept.isEmpty { return [text] }
                kept.removeLast(max(1, kept.count / 4))
            }
        }
    }

    /// The message encoded by ``encoded()``, or `nil` for text that is not one (from a newer or
    /// foreign sender: ignored).
    public init?(decoding text: String) {
        guard let value = try? JSONValue(parsing: Data(text.utf8)), let type = value["t"]?.stringValue else {
            return nil
        }
        let documentID = value["d"]?.stringValue
        let layer = value["l"]?.stringValue
        switch type {
        case "revision":
            guard let documentID, let layer, let revision = value["r"]?.integerValue else { return nil }
            self = .committed(.revisionChanged(documentID: documentID, layer: layer, revision: revision))
        case "removed":
            guard let documentID, let layer else { return nil }
            self = .committed(.layerRemoved(documentID: documentID, layer: layer))
        case "revoked":
            guard let ids = value["j"]?.arrayValue?.compactMap(\.stringValue) else { return nil }
            self = .committed(.tokensRevoked(ids))
        case "presence":
            guard let node = value["n"]?.stringValue, let documentID, let layer,
                let users = value["u"]?.arrayValue
            else { return nil }
            var entries: [LayerEvents.Presence] = []
            for user in users {
                guard let pair = user.arrayValue, pair.count == 2, let count = pair[1].integerValue, count > 0,
                    count <= Int64(Int32.max)
                else { return nil }
                entries.append(LayerEvents.Presence(userID: pair[0].stringValue, connections: Int(count)))
            }
            self = .presence(node: node, documentID: documentID, layer: layer, entries: entries)
        default:
            return nil
        }
    }

    private static func text(_ value: JSONValue) -> String {
        value.serializedString()
    }
}

/// The channel between server nodes that share one database (PostgreSQL `LISTEN/NOTIFY`).
public protocol NodeChannel: Sendable {
    /// Sends a message to every node, this one included, outside any transaction.
    func publish(_ message: NodeMessage) async throws

    /// The messages of every node as they arrive, and a ``NodeChannelEvent/reconnected`` each time
    /// the channel was down and is back (messages sent meanwhile are lost: catch up from the
    /// database). Ends when the channel shuts down.
    func messages() -> AsyncStream<NodeChannelEvent>
}

/// What arrives on a ``NodeChannel``.
public enum NodeChannelEvent: Sendable, Hashable {
    /// A message from some node.
    case message(NodeMessage)
    /// The channel was down and is listening again.
    case reconnected
}
