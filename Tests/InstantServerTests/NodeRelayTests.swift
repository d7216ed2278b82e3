import Foundation
import InstantTesting
import Prometheus
import Synchronization
import Testing

@testable import InstantServer

/// Several nodes in one process, joined by an in-memory ``NodeChannel`` that delivers every
/// message to every subscriber, as PostgreSQL's `LISTEN/NOTIFY` does (the PostgreSQL channel is
/// tested against a real server in the PostgreSQL suites).
final class InMemoryNodeHub: Sendable {
    private let subscribers = Mutex<[UUID: AsyncStream<NodeChannelEvent>.Continuation]>([:])

    /// A node's end of the hub; messages go through their encoded form, as on the wire.
    struct Endpoint: NodeChannel {
        let hub: InMemoryNodeHub

        func publish(_ message: NodeMessage) async throws {
            for text in message.encoded() {
                guard let decoded = NodeMessage(decoding: text) else { continue }
                for subscriber in hub.subscribers.withLock({ Array($0.values) }) {
                    subscriber.yield(.message(decoded))
                }
            }
        }

        func messages() -> AsyncStream<NodeChannelEvent> {
            let (stream, continuation) = AsyncStream<NodeChannelEvent>.makeStream()
            let id = UUID()
            hub.subscribers.withLock { $0[id] = continuation }
            continuation.onTermination = { [hub] _ in _ = hub.subscribers.withLock { $0.removeValue(forKey: id) } }
            return stream
        }
    }

    var endpoint: Endpoint { Endpoint(hub: self) }

    /// Tells every node that the channel came back after it was down.
    func reconnect() {
        for subscriber in subscribers.withLock({ Array($0.values) }) { subscriber.yield(.reconnected) }
    }
}

@Suite("Server nodes sharing one database", .timeLimit(.minutes(10)))
struct NodeRelayTests {
    static let layer = LayerEvents.Layer(documentID: "d", name: "")

    static func token(_ user: String) -> ClientToken {
        ClientToken(
            documentID: "d", permissions: ["read-document"], userID: user, tokenID: "jti-\(user)",
            expiresAt: Date().addingTimeInterval(3600))
    }

    /// One node: its listener events and its relay, running until the test cancels it.
    struct Node {
        let events: LayerEvents
        let relay: Task<Void, Never>
    }

    static func node(
        _ hub: InMemoryNodeHub, storage: InstantStorage, renewal: Duration = .milliseconds(100),
        metrics: ServerMetrics = ServerMetrics(registry: PrometheusCollectorRegistry())
    ) -> Node {
        let events = LayerEvents(limits: ListeningLimits(presenceInterval: .milliseconds(10)), metrics: metrics)
        let relay = NodeRelay(channel: hub.endpoint, events: events, storage: storage, presenceRenewal: renewal)
        return Node(events: events, relay: Task { try? await relay.run() })
    }

    @Test func messagesSurviveTheirEncoding() {
        let messages: [NodeMessage] = [
            .committed(.revisionChanged(documentID: "d\"1", layer: "l/ä", revision: 42)),
            .committed(.layerRemoved(documentID: "d", layer: "")),
            .committed(.tokensRevoked(["a", "b"])),
            .presence(
                node: "n", documentID: "d", layer: "",
                entries: [.init(userID: nil, connections: 2), .init(userID: "alice", connections: 1)]),
        ]
        for message in messages {
            #expect(message.encoded().compactMap(NodeMessage.init(decoding:)) == [message])
        }
        #expect(NodeMessage(decoding: #"{"t":"unknown"}"#) == nil)
        #expect(NodeMessage(decoding: "not json") == nil)
        #expect(NodeMessage(decoding: #"{"t":"presence","n":"x","d":"d","l":"","u":[["a",-1]]}"#) == nil)
    }

    @Test func everyMessageFitsOneNotification() {
        let ids = (0..<5_000).map { "token-\($0)-\(String(repeating: "x", count: 20))" }
        let revocations = NodeMessage.committed(.tokensRevoked(ids)).encoded()
        #expect(revocations.count > 1)
        #expect(revocations.allSatisfy { $0.utf8.count <= NodeMessage.maximumEncodedSize })
        let decoded = revocations.compactMap(NodeMessage.init(decoding:)).flatMap { message -> [String] in
            if case .committed(.tokensRevoked(let part)) = message { return part }
            return []
        }
        #expect(decoded == ids)

        let crowd = (0..<2_000).map { LayerEvents.Presence(userID: "user-\($0)", connections: $0 % 3 + 1) }
        let presence = NodeMessage.presence(node: "n", documentID: "d", layer: "", entries: crowd).encoded()
        #expect(presence.count == 1 && presence[0].utf8.count <= NodeMessage.maximumEncodedSize)
    }

    /// Presence lists the listeners of every node, and forgets a node that stops reporting.
    @Test func presenceListsTheListenersOfEveryNode() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try InstantStorage.sqlite(directory: directory.url)
        let hub = InMemoryNodeHub()
        let a = Self.node(hub, storage: storage)
        let b = Self.node(hub, storage: storage)
        defer { b.relay.cancel() }

        let alice = try await a.events.listen(on: Self.layer, token: Self.token("alice"), isVisible: true)
        let bob = try await b.events.listen(on: Self.layer, token: Self.token("bob"), isVisible: true)
        let both = [
            LayerEvents.Presence(userID: "alice", connections: 1), LayerEvents.Presence(userID: "bob", connections: 1),
        ]
        #expect(
            try await eventually {
                let onA = await a.events.state(of: Self.layer, listener: alice.id).presence
                let onB = await b.events.state(of: Self.layer, listener: bob.id).presence
                return onA == both && onB == both
            })

        // Node A stops without a word (killed): B forgets its users once their copy expires.
        a.relay.cancel()
        #expect(
            try await eventually {
                await b.events.state(of: Self.layer, listener: bob.id).presence == [
                    .init(userID: "bob", connections: 1)
                ]
            })
    }

    /// Commits and revocations of one node reach the listeners of the others.
    @Test func commitsAndRevocationsReachEveryNode() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try InstantStorage.sqlite(directory: directory.url)
        let hub = InMemoryNodeHub()
        let a = Self.node(hub, storage: storage)
        let b = Self.node(hub, storage: storage)
        defer {
            a.relay.cancel()
            b.relay.cancel()
        }
        let carol = try await b.events.listen(on: Self.layer, token: Self.token("carol"), isVisible: false)
        // Node A's commit, announced on the channel as its storage would.
        #expect(
            try await eventually {
                try await hub.endpoint.publish(.committed(.revisionChanged(documentID: "d", layer: "", revision: 7)))
                return await b.events.state(of: Self.layer, listener: carol.id).revision == 7
            })
        try await hub.endpoint.publish(.committed(.tokensRevoked(["jti-carol"])))
        #expect(
            try await eventually {
                await b.events.state(of: Self.layer, listener: carol.id).isRevoked
            })
    }

    /// A node counts the messages of the other nodes by kind, and the times their channel came back.
    @Test func aNodeCountsWhatItHearsAndTheReturnsOfTheChannel() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try InstantStorage.sqlite(directory: directory.url)
        let hub = InMemoryNodeHub()
        let registry = PrometheusCollectorRegistry()
        let node = Self.node(hub, storage: storage, metrics: ServerMetrics(registry: registry))
        defer { node.relay.cancel() }
        func sample(_ series: String) -> Double {
            ServerMetricsTests.Samples(text: String(decoding: registry.emitToBuffer(), as: UTF8.self))[series] ?? 0
        }
        // Sent until the relay, which starts on its own, hears one.
        #expect(
            try await eventually {
                try await hub.endpoint.publish(.committed(.revisionChanged(documentID: "d", layer: "", revision: 3)))
                return sample(#"instant_node_messages_total{kind="commit"}"#) >= 1
            })
        #expect(sample(#"instant_node_messages_total{kind="presence"}"#) == 0)
        try await hub.endpoint.publish(.presence(node: "other", documentID: "d", layer: "", entries: []))
        #expect(try await eventually { sample(#"instant_node_messages_total{kind="presence"}"#) == 1 })
        #expect(sample("instant_node_channel_reconnections_total") == 0)
        hub.reconnect()
        #expect(try await eventually { sample("instant_node_channel_reconnections_total") == 1 })
    }
}
