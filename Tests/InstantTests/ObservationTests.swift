import Foundation
import InstantJSON
import InstantServer
import InstantTesting
import Testing

@testable import Instant

/// Collects what an `AsyncSequence` yields, on a task of its own, until the sequence ends.
final class Collected<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var elements: [Element] = []
    private var ended = false
    private var task: Task<Void, Never>?

    init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Element {
        task = Task {
            do {
                for try await element in sequence { self.lock.withLock { self.elements.append(element) } }
            } catch {}
            self.lock.withLock { self.ended = true }
        }
    }

    deinit { task?.cancel() }

    var values: [Element] { lock.withLock { elements } }
    var hasEnded: Bool { lock.withLock { ended } }
}

/// Records the delegate calls about listening.
final class ListeningDelegate: InstantClientDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var calls: [String] = []

    var log: [String] { lock.withLock { calls } }

    func instantClient(
        _ client: InstantClient, documentDescriptor descriptor: InstantDocumentDescriptor,
        didFailListeningWithError error: InstantError
    ) {
        lock.withLock { calls.append("failed: \(error.code.rawValue)") }
    }

    func instantClient(_ client: InstantClient, didResumeListeningFor descriptor: InstantDocumentDescriptor) {
        lock.withLock { calls.append("resumed") }
    }
}

@Suite("Observing descriptors and documents", .timeLimit(.minutes(10)))
struct ObservationTests {
    /// A layer with a pending edit from an earlier launch is `unknown` until a document is
    /// obtained, then `dirty` (the seeds); a clean one becomes `clean`.
    @Test func theStateIsDeterminedWhenADocumentIsFirstObtained() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let jwt = try await server.token()
        do {
            let client = try server.client("launch")
            let descriptor = try await server.downloaded(client, jwt: jwt)
            try descriptor.setDelayForSyncingLocalChanges(.instantSyncingLocalChangesDisabled)
            try descriptor.editableDocument.add(try note(text: "pending"))
            let review = try await server.downloaded(client, jwt: try await server.token(layer: "review"))
            #expect(review.documentState == .clean)
        }
        let client = try server.client("launch")
        let descriptors = try client.localDocumentDescriptors()
        let pending = try #require(descriptors.first { $0.layerName == "" })
        let clean = try #require(descriptors.first { $0.layerName == "review" })
        let states = Collected(pending.stateUpdates)
        #expect(pending.documentState == .unknown)
        #expect(clean.documentState == .unknown)
        #expect(pending.isDownloaded && clean.isDownloaded)

        let document = pending.editableDocument
        #expect(pending.documentState == .dirty)
        #expect(try document.annotations().count == 1)
        #expect(clean.documentState == .unknown, "only the descriptor asked for a document is opened")
        _ = clean.readOnlyDocument()
        #expect(clean.documentState == .clean)
        #expect(try await eventually { states.values == [.unknown, .dirty] })
        await server.stop()
    }

    /// A listening connection that drops is announced by a notification, the delegate and the
    /// events sequence, once however many reconnections fail; its return too.
    @Test func aDroppedListeningConnectionIsAnnounced() async throws {
        let server = try await LiveServer(longPollTimeout: .seconds(1))
        defer { server.remove() }
        let transport = TestTransport(serverURL: server.server.baseURL)
        let client = try InstantClient(
            serverURL: server.server.baseURL, dataDirectory: server.clientDirectory("listen"), transport: transport)
        let delegate = ListeningDelegate()
        client.delegate = delegate
        let jwt = try await server.token()
        let descriptor = try await server.downloaded(client, jwt: jwt)
        let log = ClientBehaviourTests.NotificationLog(
            descriptor, names: [.instantDidFailListening, .instantDidResumeListening])
        let events = Collected(descriptor.events)
        let errors = ErrorLog(descriptor, name: .instantDidFailListening)
        descriptor.startListeningForServerChanges()
        #expect(
            try await eventually {
                descriptor.documentState == .clean && descriptor.lock.withLock { descriptor.machine.isListening }
            })

        transport.failListening(with: InstantError(.couldNotReachServer, "The network connection was lost."))
        #expect(try await eventually { log.names == [.instantDidFailListening] })
        #expect(errors.codes == [.couldNotReachServer])
        // The listener keeps trying; the loss is announced once.
        #expect(try await eventually { transport.failedListeningRequests >= 2 })
        #expect(log.names == [.instantDidFailListening])

        transport.failListening(with: nil)
        #expect(try await eventually { log.names == [.instantDidFailListening, .instantDidResumeListening] })
        #expect(try await eventually { delegate.log == ["failed: couldNotReachServer", "resumed"] })
        let listening = { events.values.filter { $0 == .didResumeListening || $0.name == .instantDidFailListening } }
        #expect(try await eventually { listening().count == 2 })
        #expect(listening().map(\.name) == [.instantDidFailListening, .instantDidResumeListening])

        // Listening works again: a change on the server arrives without a sync() call.
        let otherClient = try server.client("other")
        let other = try await server.downloaded(otherClient, jwt: try await server.token(user: "bob"))
        let added = try other.editableDocument.add(try note(text: "after the outage"))
        other.sync()
        #expect(
            try await eventually { try descriptor.editableDocument.annotation(withIdentifier: added.id ?? "") != nil })
        descriptor.stopListeningForServerChanges()
        await server.stop()
    }

    /// A sync cycle with local changes goes through the states the seeds list, and the events
    /// sequence carries the notifications in their order.
    @Test func aSyncCycleYieldsItsStatesAndEvents() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let client = try server.client("cycle")
        let jwt = try await server.token()
        let descriptor = try client.documentDescriptor(forJWT: jwt)
        let states = Collected(descriptor.stateUpdates)
        let events = Collected(descriptor.events)
        try await descriptor.downloadAndWait(usingJWT: jwt)
        try descriptor.setDelayForSyncingLocalChanges(.instantSyncingLocalChangesDisabled)
        try descriptor.editableDocument.add(try note(text: "cycle"))
        try await descriptor.syncAndWait()

        #expect(
            try await eventually {
                states.values == [.unknown, .clean, .dirty, .sendingChanges, .receivingChanges, .clean]
            }, "\(states.values)")
        #expect(
            try await eventually {
                events.values == [
                    .didFinishDownload, .didBeginSyncing, .syncCycleDidChangeState(.receivingChanges),
                    .didFinishSyncing,
                ]
            }, "\(events.values)")
        #expect(!states.hasEnded && !events.hasEnded)
        await server.stop()
    }

    /// Every sequence ends when the descriptor becomes invalid (here: its client is released);
    /// one got afterwards ends at once.
    @Test func theSequencesEndWhenTheDescriptorBecomesInvalid() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        var client: InstantClient? = try server.client("ending")
        let jwt = try await server.token()
        let descriptor = try await server.downloaded(try #require(client), jwt: jwt)
        let document = descriptor.editableDocument
        let states = Collected(descriptor.stateUpdates)
        let events = Collected(descriptor.events)
        let changes = Collected(document.changes)
        client = nil
        #expect(try await eventually { states.hasEnded && events.hasEnded && changes.hasEnded })
        #expect(states.values == [.clean, .invalid])
        let late = Collected(descriptor.stateUpdates)
        let lateEvents = Collected(descriptor.events)
        #expect(try await eventually { late.hasEnded && lateEvents.hasEnded })
        #expect(late.values == [.invalid])
        await server.stop()
    }

    /// Local edits and changes from the server show up in a document's change sequence as added,
    /// updated and removed records.
    @Test func localAndRemoteChangesShowUpInTheChangeSequence() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let aliceClient = try server.client("alice")
        let bobClient = try server.client("bob")
        let alice = try await server.downloaded(aliceClient, jwt: try await server.token())
        let bob = try await server.downloaded(bobClient, jwt: try await server.token(user: "bob"))
        for descriptor in [alice, bob] {
            try descriptor.setDelayForSyncingLocalChanges(.instantSyncingLocalChangesDisabled)
        }
        let aliceChanges = Collected(alice.editableDocument.changes)
        let bobDocument = bob.readOnlyDocument()
        let bobChanges = Collected(bobDocument.changes)

        var added = try alice.editableDocument.add(try note(text: "first"))
        let id = try #require(added.id)
        try await alice.syncAndWait()
        try await bob.syncAndWait()
        #expect(
            try await eventually {
                bobChanges.values.contains(InstantDocumentChange(origin: .server, added: [id]))
            }, "\(bobChanges.values)")

        added["text"] = ["format": "plain", "value": "edited"]
        try alice.editableDocument.update(added)
        try await alice.syncAndWait()
        try await bob.syncAndWait()
        #expect(
            try await eventually {
                bobChanges.values.contains(InstantDocumentChange(origin: .server, updated: [id]))
            }, "\(bobChanges.values)")

        try alice.editableDocument.remove(added)
        try await alice.syncAndWait()
        try await bob.syncAndWait()
        #expect(
            try await eventually {
                bobChanges.values.contains(InstantDocumentChange(origin: .server, removed: [id]))
            }, "\(bobChanges.values)")

        // Alice's own edits, in order; her syncs bring back only the server's stamps (`updatedAt`).
        #expect(
            aliceChanges.values.filter { $0.origin == .server }.allSatisfy {
                $0 == InstantDocumentChange(origin: .server, updated: [id])
            }, "\(aliceChanges.values)")
        #expect(
            aliceChanges.values.filter { $0.origin == .localEdit } == [
                InstantDocumentChange(origin: .localEdit, added: [id]),
                InstantDocumentChange(origin: .localEdit, updated: [id]),
                InstantDocumentChange(origin: .localEdit, removed: [id]),
            ], "\(aliceChanges.values)")
        #expect(try bobDocument.annotations().isEmpty)
        await server.stop()
    }
}

/// Collects the error codes of one notification of one descriptor.
final class ErrorLog: @unchecked Sendable {
    private let lock = NSLock()
    private var received: [InstantError.Code] = []
    private var token: (any NSObjectProtocol)?

    init(_ descriptor: InstantDocumentDescriptor, name: Notification.Name) {
        token = NotificationCenter.default.addObserver(forName: name, object: descriptor, queue: nil) {
            [weak self] notification in
            let code = (notification.userInfo?[InstantNotificationKey.error] as? InstantError)?.code
            self?.lock.withLock { self?.received.append(code ?? InstantError.Code(rawValue: "none")) }
        }
    }

    deinit { if let token { NotificationCenter.default.removeObserver(token) } }

    var codes: [InstantError.Code] { lock.withLock { received } }
}
