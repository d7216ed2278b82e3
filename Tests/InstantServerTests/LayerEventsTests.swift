import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing

@testable import InstantServer

/// How ``LayerEvents`` hands what happened on a layer to listeners without a task of their own.
@Suite("Layer events: notifying listeners")
struct LayerEventsTests {
    static let layer = LayerEvents.Layer(documentID: "d", name: "")

    static func message(since: Int64) -> (LayerEvents.Layer, ChangeMessage) {
        let changes = LayerChangeSet(documentID: "d", layer: "", since: since, revision: since + 1, records: [])
        return (layer, ChangeMessage(changes, maximumSize: 1 << 16))
    }

    /// Listens on the layer from revision 0, on `loop`; returns what its listener is handed.
    static func listener(
        _ events: LayerEvents, user: String, on loop: any EventLoop
    ) async throws -> NIOLockedValueBox<[LayerEvents.State]> {
        let received = NIOLockedValueBox<[LayerEvents.State]>([])
        _ = try await events.listen(
            on: layer, token: NodeRelayTests.token(user), isVisible: false, recordsAfter: 0, notifyingOn: loop
        ) { state in
            loop.preconditionInEventLoop()
            received.withLockedValue { $0.append(state) }
        }
        return received
    }

    @Test func aGroupsCommitsReachEachListenerOnceWithAllTheirChangeMessages() async throws {
        let events = LayerEvents()
        let loops = MultiThreadedEventLoopGroup.singleton
        let (first, second) = (loops.next(), loops.next())
        let listeners = [
            try await Self.listener(events, user: "a", on: first),
            try await Self.listener(events, user: "b", on: first),
            try await Self.listener(events, user: "c", on: second),
        ]

        await events.recordsCommitted([Self.message(since: 0), Self.message(since: 1), Self.message(since: 2)])
        // Whatever the events handed to a loop is queued there by now: a task queued after it
        // runs after it.
        try await first.submit {}.get()
        try await second.submit {}.get()

        for received in listeners {
            let states = received.withLockedValue { $0 }
            #expect(states.count == 1)
            #expect(states.first?.revision == 3)
            #expect(states.first?.changes.map(\.since) == [0, 1, 2])
        }

        // The next commit goes on from there.
        await events.recordsCommitted([Self.message(since: 3)])
        try await first.submit {}.get()
        try await second.submit {}.get()
        for received in listeners {
            #expect(received.withLockedValue { $0.last?.changes.map(\.revision) } == [4])
        }
    }

    /// Commits are encoded as change messages only for layers with a listener that receives
    /// records; such a listener gets the records of each commit, and once it stops, the layer's
    /// commits are no longer encoded.
    @Test func changeMessagesAreMadeOnlyForLayersWithListenersOfRecords() async throws {
        let events = LayerEvents()
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let record = StoredRecord(
            id: "a", kind: .annotation, revision: 1, isDeleted: false, content: Data(#"{"v":2}"#.utf8),
            updatedAt: Date())
        let commit = LayerChangeSet(documentID: "d", layer: "", since: 0, revision: 1, records: [record])
        #expect(!events.hasRecordListeners(on: Self.layer))
        // A listener of revisions only does not count.
        let revisionsOnly = try await events.listen(
            on: Self.layer, token: NodeRelayTests.token("r"), isVisible: false, notifyingOn: loop
        ) { _ in }
        #expect(!events.hasRecordListeners(on: Self.layer))

        let received = NIOLockedValueBox<[LayerEvents.State]>([])
        let ofRecords = try await events.listen(
            on: Self.layer, token: NodeRelayTests.token("a"), isVisible: false, recordsAfter: 0, notifyingOn: loop
        ) { state in received.withLockedValue { $0.append(state) } }
        #expect(events.hasRecordListeners(on: Self.layer))
        await events.recordsCommitted([commit])
        try await loop.submit {}.get()
        let message = try #require(received.withLockedValue { $0.last?.changes.first })
        #expect(message.text.map { String(buffer: $0) }?.contains(#""id":"a""#) == true)

        // The listener of revisions starts to receive records from the revision it has: the layer
        // keeps a listener of records until both stop.
        _ = await events.state(of: Self.layer, listener: revisionsOnly, changesAfter: 1)
        await events.stopListening(ofRecords)
        #expect(events.hasRecordListeners(on: Self.layer))
        await events.stopListening(revisionsOnly)
        #expect(!events.hasRecordListeners(on: Self.layer))
    }

    /// What a listening WebSocket holds while it answers a sync request: past
    /// ``ListeningWebSocketHandler/maxHeldChangeMessages`` change messages, none, and the
    /// revision (the client pulls).
    @Test func heldChangeMessagesPastTheLimitGiveWayToTheRevision() {
        func state(since: Int64) -> LayerEvents.State {
            LayerEvents.State(
                revision: since + 1, presence: [], presenceVersion: 0, presenceMessage: ByteBuffer(),
                isRevoked: false, changes: [Self.message(since: since).1])
        }
        let limit = ListeningWebSocketHandler.maxHeldChangeMessages
        var held = state(since: 0)
        for since in 1..<Int64(limit) { held.append(state(since: since), keepingAtMost: limit) }
        #expect(held.changes.map(\.since) == Array(0..<Int64(limit)))
        #expect(held.revision == Int64(limit))

        held.append(state(since: Int64(limit)), keepingAtMost: limit)
        #expect(held.changes.isEmpty)
        #expect(held.revision == Int64(limit) + 1)

        // What comes after does not follow the client's revision: it is told the revision then.
        held.append(state(since: Int64(limit) + 1), keepingAtMost: limit)
        #expect(held.changes.map(\.since) == [Int64(limit) + 1])
        #expect(held.revision == Int64(limit) + 2)
    }
}
