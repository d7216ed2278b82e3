import Foundation
import Logging
import ServiceLifecycle

/// Keeps this node's listeners in step with the other server nodes that share its database: wakes
/// them for commits made on other nodes, cuts off tokens revoked through other nodes, and makes
/// presence list the listeners of every node.
///
/// After the channel was down (messages sent meanwhile are lost), the relay catches up from the
/// database: each listened layer's revision, and whether any listener's token was revoked.
public struct NodeRelay: Service {
    /// This node's id in presence messages (random per process).
    public let nodeID: String
    let channel: any NodeChannel
    let events: LayerEvents
    let storage: InstantStorage
    /// How often this node reports its presence again; other nodes forget a node's presence after
    /// three of these without a report.
    let presenceRenewal: Duration
    let logger: Logger

    /// Creates the relay of one node.
    public init(
        channel: any NodeChannel,
        events: LayerEvents,
        storage: InstantStorage,
        presenceRenewal: Duration = .seconds(2),
        logger: Logger = Logger(label: "instant.nodes")
    ) {
        self.nodeID = UUID().uuidString
        self.channel = channel
        self.events = events
        self.storage = storage
        self.presenceRenewal = presenceRenewal
        self.logger = logger
    }

    /// Runs until the service group shuts down.
    public func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { await receive() }
            group.addTask { await sendPresenceChanges() }
            group.addTask { await renewPresence() }
            // Ends when the service group shuts down, or when the relay's task is cancelled.
            try? await gracefulShutdown()
            group.cancelAll()
        }
    }

    /// Takes every node's messages.
    func receive() async {
        for await event in channel.messages() {
            switch event {
            case .message(.committed(let event)):
                events.metrics.heard(.commit)
                if case .tokensRevoked(let ids) = event { storage.noteRevoked(ids) }
                await events.storageCommitted([event])
            case .message(.presence(let node, let documentID, let layer, let entries)):
                events.metrics.heard(.presence)
                guard node != nodeID else { continue }
                await events.nodeReported(
                    node, on: LayerEvents.Layer(documentID: documentID, name: layer), presence: entries,
                    validFor: presenceRenewal * 3)
            case .reconnected:
                events.metrics.nodeChannelReconnected()
                await catchUp()
            }
        }
    }

    /// Tells the other nodes whenever this node's users of a layer change.
    func sendPresenceChanges() async {
        for await (layer, entries) in events.localPresence {
            await publish(.presence(node: nodeID, documentID: layer.documentID, layer: layer.name, entries: entries))
        }
    }

    /// Reports this node's presence again before the other nodes' copies expire, and expires the
    /// copies of nodes that stopped reporting.
    func renewPresence() async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: presenceRenewal) } catch { return }
            for (layer, entries) in await events.localPresenceSnapshot() {
                await publish(
                    .presence(node: nodeID, documentID: layer.documentID, layer: layer.name, entries: entries))
            }
            await events.expireNodePresence()
        }
    }

    /// Reads what notifications may have said while the channel was down.
    func catchUp() async {
        do {
            for layer in await events.listenedLayers() {
                if let stored = try await storage.layer(documentID: layer.documentID, name: layer.name) {
                    await events.revisionChanged(layer, to: stored.revision)
                } else {
                    await events.layerRemoved(layer)
                }
            }
            var revoked: [String] = []
            for id in await events.listenedTokenIDs() where try await storage.isTokenRevoked(id: id, fromDatabase: true)
            {
                revoked.append(id)
            }
            if !revoked.isEmpty { await events.tokensRevoked(revoked) }
            logger.info("Caught up with the other nodes after the notification channel came back")
        } catch {
            logger.warning(
                "Could not catch up with the other nodes; listeners learn of changes at the next commit",
                metadata: ["error": "\(error)"])
        }
    }

    private func publish(_ message: NodeMessage) async {
        do {
            try await channel.publish(message)
        } catch {
            logger.warning("Could not tell the other nodes", metadata: ["error": "\(error)"])
        }
    }
}
