import Foundation
import InstantJSON
import InstantServer
import InstantTesting
import Testing

@testable import Instant

/// The SDK listens on the layer's WebSocket with change messages and sends its sync requests on
/// it; it falls back to pulls when a message is missing and to HTTP when the socket is down.
@Suite("SDK on the listening WebSocket", .timeLimit(.minutes(10)))
struct ListeningSocketTests {
    /// Two clients of one server, each with a test transport, both listening.
    struct Pair {
        let server: LiveServer
        let aliceTransport: TestTransport
        let bobTransport: TestTransport
        let alice: InstantDocumentDescriptor
        let bob: InstantDocumentDescriptor
        // The clients own their descriptors' store and must outlive the test's use of them.
        let clients: [InstantClient]

        init(_ server: LiveServer, webSockets: Bool = true) async throws {
            self.server = server
            aliceTransport = TestTransport(serverURL: server.server.baseURL)
            bobTransport = TestTransport(serverURL: server.server.baseURL)
            aliceTransport.allowWebSockets(webSockets)
            bobTransport.allowWebSockets(webSockets)
            let aliceClient = try InstantClient(
                serverURL: server.server.baseURL, dataDirectory: server.clientDirectory("alice"),
                transport: aliceTransport)
            let bobClient = try InstantClient(
                serverURL: server.server.baseURL, dataDirectory: server.clientDirectory("bob"), transport: bobTransport)
            clients = [aliceClient, bobClient]
            alice = try await server.downloaded(aliceClient, jwt: try await server.token())
            bob = try await server.downloaded(bobClient, jwt: try await server.token(user: "bob"))
            try alice.setDelayForSyncingLocalChanges(.instantSyncingLocalChangesDisabled)
            try bob.setDelayForSyncingLocalChanges(.instantSyncingLocalChangesDisabled)
            alice.startListeningForServerChanges()
            bob.startListeningForServerChanges()
            let (aliceTransport, bobTransport, alice, bob) = (aliceTransport, bobTransport, alice, bob)
            // The server registered both listeners (else the first commits may reach them as a
            // revision to pull).
            #expect(
                try await eventually {
                    (!webSockets
                        || [aliceTransport.seen, bobTransport.seen].allSatisfy {
                            $0.webSockets == 1 && $0.presenceMessages >= 1
                        })
                        && alice.documentState == .clean && bob.documentState == .clean
                })
        }

        /// Alice adds `count` notes, syncing each; returns their ids.
        func aliceAdds(_ count: Int, from first: Int = 0, between: (Int) -> Void = { _ in }) async throws -> [String] {
            var ids: [String] = []
            for index in first..<(first + count) {
                let added = try alice.editableDocument.add(try note(text: "note \(index)"))
                ids.append(try #require(try alice.identifier(for: added)))
                try await alice.syncAndWait()
                between(index)
            }
            return ids
        }

        /// Whether Bob's layer has exactly these notes, with Alice's texts.
        func bobHas(_ ids: [String]) throws -> Bool {
            let annotations = try bob.editableDocument.annotations()
            return Set(annotations.compactMap(\.id)) == Set(ids) && bob.documentState == .clean
        }
    }

    @Test func changesArriveOnTheSocketAndPushesGoOnItWithoutHTTP() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let pair = try await Pair(server)
        let aliceBefore = pair.aliceTransport.seen
        let bobBefore = pair.bobTransport.seen

        let ids = try await pair.aliceAdds(20)
        #expect(try await eventually { try pair.bobHas(ids) })
        let bobNote = try pair.bob.editableDocument.annotations().first { $0.id == ids[7] }
        #expect(bobNote?.jsonValue["text"]?["value"]?.stringValue == "note 7")

        #expect(pair.aliceTransport.seen.httpSyncs == aliceBefore.httpSyncs, "Alice's pushes went on her WebSocket")
        #expect(pair.bobTransport.seen.httpSyncs == bobBefore.httpSyncs, "Bob applied change messages, no pull")
        #expect(pair.bobTransport.seen.changeMessages - bobBefore.changeMessages >= 20)
        #expect(try Set(await server.serverAnnotations().keys) == Set(ids))
        await server.stop()
    }

    @Test func lostChangeMessagesArePulled() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let pair = try await Pair(server)
        // The change messages of Alice's 3rd, 6th, 9th and 12th commits are lost on their way to Bob.
        let lost: Set<Int64> = [3, 6, 9, 12]
        let start = try pair.bob.store.revision(documentID: pair.bob.identifier, layer: pair.bob.layerName)
        pair.bobTransport.loseChangeMessages { revision in lost.contains(revision - start) }
        var ids: [String] = []
        for index in 1...15 {
            ids += try await pair.aliceAdds(1, from: index)
            // Bob has each change before Alice makes the next, except one whose message was lost:
            // the next message does not follow his revision, and he pulls both.
            if !lost.contains(Int64(index)) { #expect(try await eventually { try pair.bobHas(ids) }) }
        }
        #expect(pair.bobTransport.seen.lostChangeMessages == 4)
        #expect(pair.bobTransport.seen.changeMessages == 11)
        await server.stop()
    }

    @Test func socketsDroppedInTheMiddleOfABurstLoseNothingAndApplyNothingTwice() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let pair = try await Pair(server)
        // Alice pushes without waiting; both sockets break twice while her pushes are in flight.
        var ids: [String] = []
        for index in 0..<30 {
            let added = try pair.alice.editableDocument.add(try note(text: "burst \(index)"))
            ids.append(try #require(try pair.alice.identifier(for: added)))
            pair.alice.sync()
            if index == 10 || index == 20 {
                pair.aliceTransport.dropListeningConnections()
                pair.bobTransport.dropListeningConnections()
            }
        }
        try await pair.alice.syncAndWait()
        #expect(try await eventually { pair.alice.documentState == .clean })
        #expect(try await eventually { try pair.bobHas(ids) })
        let onServer = try await server.serverAnnotations()
        #expect(Set(onServer.keys) == Set(ids))
        #expect(Set(onServer.values.compactMap { $0["text"]?["value"]?.stringValue }).count == 30)
        // Both reconnected, and changes arrive on the new sockets.
        #expect(
            try await eventually { pair.aliceTransport.seen.webSockets >= 2 && pair.bobTransport.seen.webSockets >= 2 })
        let more = try await pair.aliceAdds(3, from: 30)
        #expect(try await eventually { try pair.bobHas(ids + more) })
        await server.stop()
    }

    @Test func withoutWebSocketsTheSDKLongPollsAndSyncsOverHTTP() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let pair = try await Pair(server, webSockets: false)
        let before = pair.aliceTransport.seen.httpSyncs
        let ids = try await pair.aliceAdds(5)
        #expect(try await eventually { try pair.bobHas(ids) })
        #expect(pair.aliceTransport.seen.httpSyncs - before >= 5, "her pushes went over HTTP")
        #expect(pair.aliceTransport.seen.webSockets == 0 && pair.bobTransport.seen.webSockets == 0)
        await server.stop()
    }
}
