import Foundation
import InstantJSON
import InstantServer
import InstantTesting
import Testing

@testable import Instant

@Suite("SDK against a live server", .timeLimit(.minutes(10)))
struct ClientSyncTests {
    @Test func downloadEditAndSync() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let client = try server.client("a")
        let jwt = try await server.token()
        let descriptor = try client.documentDescriptor(forJWT: jwt)
        #expect(try client.documentDescriptor(forJWT: jwt) === descriptor, "one descriptor per layer")
        #expect(descriptor.documentState == .unknown)
        #expect(!descriptor.isDownloaded)
        let document = descriptor.editableDocument
        #expect(throws: InstantError.self) { try document.annotations() }

        try descriptor.download(usingJWT: jwt)
        try descriptor.download(usingJWT: jwt)  // a second call during the download starts nothing new
        #expect(try await eventually { descriptor.documentState == .clean })
        #expect(descriptor.isDownloaded)
        #expect(descriptor.userID == "alice")
        #expect(FileManager.default.fileExists(atPath: client.store.pdfURL(documentID: server.documentID).path))
        #expect(throws: InstantError.self) { try descriptor.download(usingJWT: jwt) }

        try descriptor.setDelayForSyncingLocalChanges(.instantSyncingLocalChangesDisabled)
        let added = try document.add(try note(text: "hello"))
        let id = try #require(document.identifier(for: added))
        #expect(descriptor.documentState == .dirty)
        #expect(try document.annotation(withIdentifier: id)?.pageIndex == 0)
        descriptor.sync()
        #expect(try await eventually { descriptor.documentState == .clean })
        let onServer = try await server.serverAnnotations()
        #expect(onServer[id]?["text"]?["value"]?.stringValue == "hello")

        try document.remove(added)
        #expect(try document.annotations().isEmpty)
        descriptor.sync()
        #expect(try await eventually { descriptor.documentState == .clean })
        #expect(try await server.serverAnnotations().isEmpty)
        await server.stop()
    }

    /// Pending changes larger than a server takes in one push go out in several pushes, oldest
    /// first, and all arrive.
    @Test func manyPendingChangesAreSentInSeveralPushes() async throws {
        let server = try await LiveServer(clientLimits: ClientLimits(maxSyncBodySize: 5 * 1024 * 1024 / 2))
        defer { server.remove() }
        let client = try server.client("a")
        let jwt = try await server.token()
        let descriptor = try await server.downloaded(client, jwt: jwt)
        try descriptor.setDelayForSyncingLocalChanges(.instantSyncingLocalChangesDisabled)
        var ids: [String] = []
        for index in 0..<30 {
            let added = try descriptor.editableDocument.add(
                try note(text: "\(index) " + String(repeating: "x", count: 100_000)))
            ids.append(try #require(descriptor.editableDocument.identifier(for: added)))
        }
        descriptor.sync()
        #expect(try await eventually { descriptor.documentState == .clean })
        let onServer = try await server.serverAnnotations()
        #expect(Set(onServer.keys) == Set(ids))
        await server.stop()
    }

    @Test func twoClientsConvergeThroughListening() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let alice = try server.client("a")
        let bob = try server.client("b")
        let aliceJWT = try await server.token()
        let bobJWT = try await server.token(user: "bob")
        let a = try alice.documentDescriptor(forJWT: aliceJWT)
        let b = try bob.documentDescriptor(forJWT: bobJWT)
        try a.download(usingJWT: aliceJWT)
        try b.download(usingJWT: bobJWT)
        #expect(try await eventually { a.documentState == .clean && b.documentState == .clean })
        b.startListeningForServerChanges()
        let readOnly = b.readOnlyDocument()
        let seen = Counter()
        _ = readOnly.observeChanges { _ in seen.increment() }

        let added = try a.editableDocument.add(try note(text: "from alice"))
        // The automatic sync (1 s after the edit) pushes it; Bob's listener pulls it.
        #expect(try await eventually { try readOnly.annotations().count == 1 })
        #expect(try readOnly.annotations().first?.id == added.id)
        #expect(seen.value > 0)
        #expect(throws: InstantError.self) { try readOnly.add(try note()) }

        // Bob answers; Alice syncs by hand.
        var changed = try #require(try b.editableDocument.annotations().first)
        changed["text"] = ["format": "plain", "value": "bob was here"]
        try b.editableDocument.update(changed)
        b.sync()
        #expect(try await eventually { b.documentState == .clean })
        a.sync()
        #expect(
            try await eventually {
                try a.editableDocument.annotations().first?["text"]?["value"]?.stringValue == "bob was here"
            })
        b.stopListeningForServerChanges()
        await server.stop()
    }

    @Test func offlineEditsSurviveARestartAndSyncLater() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let directory = server.clientDirectory("offline")
        let jwt = try await server.token()
        var id = ""
        do {
            let client = try InstantClient(serverURL: server.server.baseURL, dataDirectory: directory)
            let descriptor = try await server.downloaded(client, jwt: jwt)
            try descriptor.setDelayForSyncingLocalChanges(.instantSyncingLocalChangesDisabled)
            await server.stop()
            id = try descriptor.editableDocument.add(try note(text: "offline")).id ?? ""
            descriptor.sync()
            #expect(try await eventually { descriptor.documentState == .dirty })
        }
        // A new process: a new client on the same data directory; the server is back elsewhere.
        try await server.restart()
        let client = try InstantClient(serverURL: server.server.baseURL, dataDirectory: directory)
        let descriptors = try client.localDocumentDescriptors()
        #expect(descriptors.map(\.identifier) == [server.documentID])
        let descriptor = try #require(descriptors.first)
        // The state is determined when a document is first obtained, not before (the seeds).
        #expect(descriptor.documentState == .unknown)
        #expect(descriptor.isDownloaded)
        #expect(throws: InstantError.self) { try descriptor.download(usingJWT: jwt) }
        let document = descriptor.editableDocument
        #expect(descriptor.documentState == .dirty, "the pending edit survived")
        #expect(try document.annotation(withIdentifier: id) != nil)
        // Tokens are not stored: the relaunched app hands one over, and the edit goes out.
        try descriptor.reauthenticate(withJWT: jwt)
        #expect(try await eventually { descriptor.documentState == .clean })
        #expect(try await server.serverAnnotations()[id]?["text"]?["value"]?.stringValue == "offline")
        await server.stop()
    }

    @Test func aRejectedCreationDisappearsLocally() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let client = try server.client("r")
        let jwt = try await server.token(permissions: ["read-document"])
        let descriptor = try await server.downloaded(client, jwt: jwt)
        try descriptor.setDelayForSyncingLocalChanges(.instantSyncingLocalChangesDisabled)
        try descriptor.editableDocument.add(try note())
        #expect(try descriptor.editableDocument.annotations().count == 1)
        descriptor.sync()
        #expect(try await eventually { descriptor.documentState == .clean })
        #expect(try descriptor.editableDocument.annotations().isEmpty, "the server refused it: it is gone")
        await server.stop()
    }

    @Test func tokensAreCheckedAgainstTheDescriptor() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let client = try server.client("t")
        #expect(throws: InstantError.self) { try client.documentDescriptor(forJWT: "not a token") }
        let jwt = try await server.token()
        let descriptor = try client.documentDescriptor(forJWT: jwt)
        let otherLayer = try await server.token(layer: "review")
        #expect(throws: InstantError.self) { try descriptor.download(usingJWT: otherLayer) }
        #expect(try client.documentDescriptor(forJWT: otherLayer) !== descriptor)
        try descriptor.download(usingJWT: jwt)
        #expect(try await eventually { descriptor.documentState == .clean })
        let carol = try await server.token(user: "carol")
        do {
            try descriptor.reauthenticate(withJWT: carol)
            Issue.record("a token of another user must be refused")
        } catch let error as InstantError {
            #expect(error.code == .userIDMismatch)
        }
        #expect(throws: InstantError.self) { try descriptor.setDelayForSyncingLocalChanges(0) }

        // Removing the layer's data returns the descriptor to unknown; then another user may use it.
        try descriptor.removeLocalStorage()
        #expect(descriptor.documentState == .unknown)
        try descriptor.download(usingJWT: carol)
        #expect(try await eventually { descriptor.documentState == .clean })
        #expect(descriptor.userID == "carol")
        await server.stop()
    }
}

/// A thread-safe counter for callbacks.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
