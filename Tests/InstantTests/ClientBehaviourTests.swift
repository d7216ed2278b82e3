import Foundation
import InstantJSON
import InstantServer
import InstantTesting
import Testing

@testable import Instant

@Suite("SDK behaviour against a live server", .timeLimit(.minutes(10)))
struct ClientBehaviourTests {
    /// Collects notifications of one descriptor.
    final class NotificationLog: @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [(name: Notification.Name, onMain: Bool)] = []
        private var tokens: [any NSObjectProtocol] = []

        init(_ descriptor: InstantDocumentDescriptor, names: [Notification.Name]) {
            for name in names {
                tokens.append(
                    NotificationCenter.default.addObserver(forName: name, object: descriptor, queue: nil) {
                        [weak self] notification in
                        let onMain = Thread.isMainThread
                        self?.lock.withLock {
                            self?.entries.append((notification.name, onMain))
                        }
                    })
            }
        }

        deinit { for token in tokens { NotificationCenter.default.removeObserver(token) } }

        var names: [Notification.Name] { lock.withLock { entries.map(\.name) } }
        var anyOnMainThread: Bool { lock.withLock { entries.contains { $0.onMain } } }
    }

    static let allNames: [Notification.Name] = [
        .instantDidFinishDownload, .instantDidFailDownload, .instantDidBeginSyncing,
        .instantSyncCycleDidChangeState, .instantDidFinishSyncing, .instantDidFailSyncing,
        .instantDidFailAuthentication, .instantDidFinishReauthentication, .instantDidFailReauthentication,
    ]

    @Test func notificationsAndProgressOfADownloadAndASyncCycle() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let client = try server.client("n")
        let jwt = try await server.token()
        let descriptor = try client.documentDescriptor(forJWT: jwt)
        let log = NotificationLog(descriptor, names: Self.allNames)
        try descriptor.download(usingJWT: jwt)
        let progress = try #require(descriptor.downloadProgress)
        #expect(try await eventually { descriptor.documentState == .clean })
        #expect(progress.fractionCompleted == 1)
        #expect(progress.completedUnitCount > 0)
        #expect(try await eventually { log.names.contains(.instantDidFinishDownload) })

        try descriptor.setDelayForSyncingLocalChanges(.instantSyncingLocalChangesDisabled)
        try descriptor.editableDocument.add(try note())
        descriptor.sync()
        #expect(try await eventually { log.names.contains(.instantDidFinishSyncing) })
        let names = log.names
        let begin = try #require(names.firstIndex(of: .instantDidBeginSyncing))
        let finish = try #require(names.firstIndex(of: .instantDidFinishSyncing))
        #expect(begin < finish)
        #expect(names[begin..<finish].contains(.instantSyncCycleDidChangeState))
        #expect(!log.anyOnMainThread, "notifications are posted off the main thread")
        await server.stop()
    }

    @Test func anAuthenticationFailureStopsSyncingUntilReauthentication() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let client = try server.client("auth")
        // Good for the download; the backend revokes it before the next sync.
        let revoked = try await server.token(tokenID: "session-1")
        let descriptor = try client.documentDescriptor(forJWT: revoked)
        let log = NotificationLog(descriptor, names: Self.allNames)
        try descriptor.download(usingJWT: revoked)
        #expect(try await eventually { descriptor.documentState == .clean })
        try await server.revoke(revoked)
        try descriptor.setDelayForSyncingLocalChanges(.instantSyncingLocalChangesDisabled)
        let added = try descriptor.editableDocument.add(try note(text: "waiting"))
        descriptor.sync()
        #expect(try await eventually { log.names.contains(.instantDidFailAuthentication) })
        #expect(descriptor.documentState == .dirty)

        // No sync until a new token arrives; then the pending edit goes out by itself.
        descriptor.sync()
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await server.serverAnnotations().isEmpty)
        try descriptor.reauthenticate(withJWT: try await server.token())
        #expect(try await eventually { log.names.contains(.instantDidFinishReauthentication) })
        #expect(try await eventually { descriptor.documentState == .clean })
        #expect(try await server.serverAnnotations()[added.id ?? ""] != nil)
        await server.stop()
    }

    /// Tokens live in memory only: nothing in the data directory holds one, and after a relaunch
    /// the first sync asks for a token; edits made meanwhile go out after reauthentication.
    @Test func tokensAreNeverStoredAndARelaunchAsksForOne() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let jwt = try await server.token()
        do {
            let client = try server.client("relaunch")
            let descriptor = try await server.downloaded(client, jwt: jwt)
            try descriptor.reauthenticate(withJWT: jwt)
            #expect(try await eventually { descriptor.documentState == .clean })
        }
        let files = try FileManager.default.subpathsOfDirectory(atPath: server.clientDirectory("relaunch").path)
        let signature = try #require(jwt.split(separator: ".").last.map(String.init))
        for file in files {
            let data =
                FileManager.default.contents(
                    atPath: server.clientDirectory("relaunch").appendingPathComponent(file).path) ?? Data()
            #expect(data.range(of: Data(signature.utf8)) == nil, "\(file) holds the token")
        }

        let relaunched = try server.client("relaunch")
        let descriptor = try #require(try relaunched.localDocumentDescriptors().first)
        let log = NotificationLog(descriptor, names: Self.allNames)
        try descriptor.setDelayForSyncingLocalChanges(.instantSyncingLocalChangesDisabled)
        let added = try descriptor.editableDocument.add(try note(text: "after relaunch"))
        descriptor.sync()
        #expect(try await eventually { log.names.contains(.instantDidFailAuthentication) })
        try descriptor.reauthenticate(withJWT: jwt)
        #expect(try await eventually { descriptor.documentState == .clean })
        #expect(try await server.serverAnnotations()[added.id ?? ""] != nil)
        await server.stop()
    }

    /// Releasing the client invalidates its descriptors.
    @Test func aReleasedClientsDescriptorsAreInvalid() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let jwt = try await server.token()
        var client: InstantClient? = try server.client("released")
        let descriptor = try await server.downloaded(try #require(client), jwt: jwt)
        client = nil
        #expect(try await eventually { descriptor.documentState == .invalid })
        #expect(throws: InstantError.self) { try descriptor.editableDocument.add(try note()) }
        await server.stop()
    }

    /// Edits the document cannot hold are refused with the reason: a page it does not have, an
    /// annotation it does not know, a value without an identifier.
    @Test func editsOfThingsTheDocumentDoesNotHaveAreRefused() async throws {
        let server = try await LiveServer(pageCount: 1)
        defer { server.remove() }
        let jwt = try await server.token()
        let client = try server.client("edits")
        let descriptor = try await server.downloaded(client, jwt: jwt)
        let document = descriptor.editableDocument
        func code(_ body: () throws -> Void) -> InstantError.Code? {
            do {
                try body()
                return nil
            } catch {
                return (error as? InstantError)?.code
            }
        }
        #expect(code { try document.add(try note(page: 99)) } == .invalidRecord)
        #expect(code { try document.add(try note(page: 1)) } == .invalidRecord)
        let passed = try note(text: "mine")
        let added = try document.add(passed)
        #expect(code { try document.update(passed) } == .annotationNotFound, "the value passed to add has no id")
        #expect(code { try document.remove(passed) } == .annotationNotFound)
        var stranger = try note()
        stranger.id = "not-in-this-document"
        #expect(code { try document.remove(stranger) } == .annotationNotFound)
        #expect(code { try document.update(stranger) } == .annotationNotFound)
        #expect(code { try document.update(added) } == nil)
        #expect(code { try document.remove(added) } == nil)
        #expect(try document.annotations().isEmpty)
        do {
            _ = try client.documentDescriptor(forJWT: "not a token")
        } catch let error as InstantError {
            #expect(!error.message.contains(".."), "\(error.message)")
        }
        await server.stop()
    }

    /// The descriptor API of the seeds: identifiers and look-ups through the descriptor, the group
    /// in effect after a reset, an assignable sync delay.
    @Test func identifiersAndGroupsThroughTheDescriptor() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let client = try server.client("api")
        let descriptor = try await server.downloaded(client, jwt: try await server.token(defaultGroup: "team"))
        let other = try await server.downloaded(client, jwt: try await server.token(layer: "other"))
        let added = try descriptor.editableDocument.add(try note(text: "mine"))
        let id = try descriptor.identifier(for: added)
        #expect(try descriptor.annotation(withIdentifier: id, for: descriptor.editableDocument).id == id)
        #expect(throws: InstantError.self, "another layer's annotation") { try other.identifier(for: added) }
        #expect(throws: InstantError.self, "never added") { try descriptor.identifier(for: try note()) }
        #expect(throws: InstantError.self, "another descriptor's document") {
            try descriptor.annotation(withIdentifier: id, for: other.editableDocument)
        }
        #expect(throws: InstantError.self, "unknown identifier") {
            try descriptor.annotation(withIdentifier: "nope", for: descriptor.editableDocument)
        }

        try descriptor.overrideDefaultGroup("reviewers")
        #expect(try descriptor.defaultGroup() == "reviewers")
        #expect(try descriptor.resetDefaultGroup() == "team")
        #expect(descriptor.migrationProgress == nil)
        descriptor.delayForSyncingLocalChanges = 3
        #expect(descriptor.delayForSyncingLocalChanges == 3)
        descriptor.delayForSyncingLocalChanges = 0
        #expect(descriptor.delayForSyncingLocalChanges == 3, "an unsupported delay changes nothing")
        await server.stop()
    }

    @Test func instantJSONRoundTripsThroughTheLayer() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let client = try server.client("j")
        let jwt = try await server.token()
        let descriptor = try await server.downloaded(client, jwt: jwt)
        let document = descriptor.editableDocument
        let input = InstantDocumentJSON(annotations: [try note(text: "one"), try note(page: 1, text: "two")])
        try document.applyInstantJSON(input.serialized())
        #expect(try document.annotations().count == 2)
        #expect(try document.annotations(onPage: 1).count == 1)

        let output = try InstantDocumentJSON.decode(try document.generateInstantJSON()).document
        #expect(Set(output.annotations.compactMap { $0["text"]?["value"]?.stringValue }) == ["one", "two"])
        let single = try #require(output.annotations.first)
        #expect(try InstantDocument.annotation(fromInstantJSON: InstantDocument.instantJSON(for: single)) == single)

        // Strict by default: one bad record refuses the whole document and writes nothing.
        let bad = Data(
            #"{"format":"https://pspdfkit.com/instant-json/v1","annotations":[{"v":2,"type":"pspdfkit/note"}]}"#.utf8)
        do {
            try document.applyInstantJSON(bad)
            Issue.record("an invalid document must be refused")
        } catch let error as InstantError {
            #expect(error.code == .invalidRecord)
            #expect(error.message.contains("annotations[0]"))
        }
        #expect(try document.annotations().count == 2)
        try document.applyInstantJSON(bad, lenient: true)
        #expect(try document.annotations().count == 2)
        await server.stop()
    }

    @Test func groupsOfNewRecords() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let client = try server.client("g")
        let jwt = try await server.token(defaultGroup: "team")
        let descriptor = try client.documentDescriptor(forJWT: jwt)
        #expect(throws: InstantError.self) { try descriptor.defaultGroup() }
        try descriptor.download(usingJWT: jwt)
        #expect(try await eventually { descriptor.documentState == .clean })
        #expect(try descriptor.defaultGroup() == "team")
        try descriptor.overrideDefaultGroup("private")
        #expect(try descriptor.defaultGroup() == "private")
        try descriptor.setDelayForSyncingLocalChanges(.instantSyncingLocalChangesDisabled)
        let added = try descriptor.editableDocument.add(try note())
        descriptor.sync()
        #expect(try await eventually { descriptor.documentState == .clean })
        let stored = try client.store.record(documentID: server.documentID, layer: "", id: added.id ?? "")
        #expect(stored?.group == "private")

        // Overriding with nil puts new records in no group, though the JWT has a default one.
        try descriptor.overrideDefaultGroup(nil)
        #expect(try descriptor.defaultGroup() == nil)
        let ungrouped = try descriptor.editableDocument.add(try note(text: "no group"))
        descriptor.sync()
        #expect(try await eventually { descriptor.documentState == .clean })
        let synced = try client.store.record(documentID: server.documentID, layer: "", id: ungrouped.id ?? "")
        #expect(synced != nil)
        #expect(synced?.group == nil)
        #expect(try descriptor.resetDefaultGroup() == "team")
        #expect(try descriptor.defaultGroup() == "team")
        let grouped = try descriptor.editableDocument.add(try note(text: "default group"))
        descriptor.sync()
        #expect(try await eventually { descriptor.documentState == .clean })
        #expect(
            try client.store.record(documentID: server.documentID, layer: "", id: grouped.id ?? "")?.group == "team")
        await server.stop()
    }

    @Test func removingStorageAndUnreferencedPDFs() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let client = try server.client("rm")
        let main = try await server.token()
        let review = try await server.token(layer: "review")
        let a = try client.documentDescriptor(forJWT: main)
        let b = try client.documentDescriptor(forJWT: review)
        try a.download(usingJWT: main)
        try b.download(usingJWT: review)
        #expect(try await eventually { a.documentState == .clean && b.documentState == .clean })
        let pdf = client.store.pdfURL(documentID: server.documentID)
        try a.removeLocalStorage()
        try client.removeUnreferencedCacheEntries()
        #expect(FileManager.default.fileExists(atPath: pdf.path), "the review layer still uses the PDF")
        #expect(try client.localDocumentDescriptors().map(\.layerName) == ["review"])
        // With the last layer gone, the PDF is unreferenced and the cache cleanup frees it.
        let other = try await client.documentDescriptor(forJWT: server.token(layer: "other"))
        try other.download(usingJWT: try await server.token(layer: "other"))
        #expect(try await eventually { other.documentState == .clean })
        try other.removeLocalStorage()
        try client.removeUnreferencedCacheEntries()
        #expect(FileManager.default.fileExists(atPath: pdf.path), "still used by the review layer")
        let document = b.editableDocument
        try client.removeLocalStorage(forDocumentIdentifier: server.documentID)
        #expect(!FileManager.default.fileExists(atPath: pdf.path))
        #expect(b.documentState == .invalid)
        #expect(!document.isValid)
        #expect(throws: InstantError.self) { try document.annotations() }
        await server.stop()
    }
}

@Suite("SDK edge cases against a live server", .timeLimit(.minutes(10)))
struct ClientEdgeCaseTests {
    @Test func cancellingTheDownloadLeavesNothingUsable() async throws {
        let server = try await LiveServer(pageCount: 4000)
        defer { server.remove() }
        let client = try server.client("c")
        let jwt = try await server.token()
        let descriptor = try client.documentDescriptor(forJWT: jwt)
        let document = descriptor.editableDocument
        let failed = Counter()
        let observer = NotificationCenter.default.addObserver(
            forName: .instantDidFailDownload, object: descriptor, queue: nil
        ) { _ in failed.increment() }
        defer { NotificationCenter.default.removeObserver(observer) }
        try descriptor.download(usingJWT: jwt)
        let progress = try #require(descriptor.downloadProgress)
        progress.cancel()
        #expect(try await eventually { failed.value == 1 })
        #expect(descriptor.documentState == .unknown)
        #expect(!descriptor.isDownloaded)
        #expect(!document.isValid)
        #expect(descriptor.downloadProgress == nil)
        // A new download works afterwards.
        try descriptor.download(usingJWT: jwt)
        #expect(try await eventually(30) { descriptor.documentState == .clean })
        #expect(try descriptor.editableDocument.annotations().isEmpty)
        await server.stop()
    }

    /// Cancels downloads at random moments, some as a response arrives. With FoundationNetworking's
    /// `data(for:)` this deadlocked within a few rounds (the test hung); it must not.
    @Test func cancellingADownloadAtAnyMomentNeverHangs() async throws {
        let server = try await LiveServer(pageCount: 300)
        defer { server.remove() }
        let client = try server.client("c")
        let jwt = try await server.token()
        var random = SplitMix64(seed: 12)
        for round in 0..<150 {
            let descriptor = try client.documentDescriptor(forJWT: jwt)
            try descriptor.download(usingJWT: jwt)
            let progress = try #require(descriptor.downloadProgress)
            try await Task.sleep(for: .microseconds(Int.random(in: 0..<4000, using: &random)))
            progress.cancel()
            #expect(try await eventually(10) { !descriptor.isDownloading }, "round \(round)")
            try client.removeLocalStorage(forDocumentIdentifier: descriptor.identifier)
        }
        await server.stop()
    }

    @Test func aRejectedUpdateRevertsToTheServersVersion() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let alice = try server.client("a")
        let bob = try server.client("b")
        let aliceJWT = try await server.token()
        let bobJWT = try await server.key.token(
            ClientClaims(
                documentID: server.documentID, permissions: ["read-document", "write"], userID: "bob",
                collaborationPermissions: ["annotations:view:all", "annotations:edit:self"],
                expiration: Date().addingTimeInterval(600)))
        let a = try await server.downloaded(alice, jwt: aliceJWT)
        try a.setDelayForSyncingLocalChanges(.instantSyncingLocalChangesDisabled)
        let original = try a.editableDocument.add(try note(text: "alice's"))
        a.sync()
        #expect(try await eventually { a.documentState == .clean })

        let b = try await server.downloaded(bob, jwt: bobJWT)
        try b.setDelayForSyncingLocalChanges(.instantSyncingLocalChangesDisabled)
        var edited = try #require(try b.editableDocument.annotation(withIdentifier: original.id ?? ""))
        edited["text"] = ["format": "plain", "value": "bob's"]
        try b.editableDocument.update(edited)
        #expect(try b.editableDocument.annotations().first?["text"]?["value"]?.stringValue == "bob's")
        b.sync()
        #expect(try await eventually { b.documentState == .clean })
        #expect(
            try b.editableDocument.annotations().first?["text"]?["value"]?.stringValue == "alice's",
            "Bob may not edit Alice's annotation: his edit is undone")
        await server.stop()
    }
}

@Suite("SDK user identity", .timeLimit(.minutes(10)))
struct ClientUserTests {
    @Test func theUserIDMayChangeOnceFromNilAndThenNever() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let client = try server.client("u")
        let anonymous = try await server.token(user: nil)
        let descriptor = try await server.downloaded(client, jwt: anonymous)
        #expect(descriptor.userID == nil)

        let finished = Counter()
        let observer = NotificationCenter.default.addObserver(
            forName: .instantDidFinishReauthentication, object: descriptor, queue: nil
        ) { _ in finished.increment() }
        defer { NotificationCenter.default.removeObserver(observer) }
        try descriptor.reauthenticate(withJWT: try await server.token(user: "alice"))
        #expect(try await eventually { finished.value == 1 })
        #expect(descriptor.userID == "alice")

        for other in [try await server.token(user: "bob"), try await server.token(user: nil)] {
            do {
                try descriptor.reauthenticate(withJWT: other)
                Issue.record("the data belongs to alice now")
            } catch let error as InstantError {
                #expect(error.code == .userIDMismatch)
            }
        }
        // The identity is kept with the data: a new client on the same directory knows it.
        let reopened = try server.client("u")
        #expect(try reopened.localDocumentDescriptors().first?.userID == "alice")
        await server.stop()
    }

    @Test func layersShareOnePDFFile() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let client = try server.client("s")
        let tokens = [try await server.token(), try await server.token(layer: "a"), try await server.token(layer: "b")]
        let descriptors = try tokens.map(client.documentDescriptor(forJWT:))
        for (descriptor, token) in zip(descriptors, tokens) { try descriptor.download(usingJWT: token) }
        #expect(try await eventually { descriptors.allSatisfy { $0.documentState == .clean } })
        let files = try FileManager.default.contentsOfDirectory(
            atPath: server.clientDirectory("s").appendingPathComponent("pdfs").path)
        #expect(files.count == 1, "one PDF file for the three layers")
        await server.stop()
    }

    @Test func cancellingOneLayersDownloadLeavesTheSharedPDFDownloadToTheOthers() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let transport = TestTransport(serverURL: server.server.baseURL, holdingPDFDownloads: true)
        let client = try InstantClient(
            serverURL: server.server.baseURL, dataDirectory: server.clientDirectory("s"), transport: transport)
        let (first, second) = (try await server.token(layer: "a"), try await server.token(layer: "b"))
        let cancelled = try client.documentDescriptor(forJWT: first)
        let kept = try client.documentDescriptor(forJWT: second)
        try cancelled.download(usingJWT: first)
        let progress = try #require(cancelled.downloadProgress)
        #expect(try await eventually { progress.completedUnitCount > 0 })
        try kept.download(usingJWT: second)
        let keptProgress = try #require(kept.downloadProgress)
        #expect(try await eventually { keptProgress.completedUnitCount > 0 }, "the joining layer sees the progress")

        progress.cancel()
        #expect(try await eventually { cancelled.documentState == .unknown && !cancelled.isDownloading })
        transport.release()
        #expect(try await eventually { kept.documentState == .clean })
        #expect(transport.pdfDownloads == 1, "one download for both layers, not cancelled with the first")
        #expect(keptProgress.completedUnitCount == keptProgress.totalUnitCount)
        await server.stop()
    }
}

@Suite("SDK attachments", .timeLimit(.minutes(10)))
struct ClientAttachmentTests {
    @Test func anImageAttachedOnOneClientCanBeWrittenOutOnAnother() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let alice = try server.client("a")
        let bob = try server.client("b")
        let aliceJWT = try await server.token()
        let bobJWT = try await server.token(user: "bob")
        let a = try await server.downloaded(alice, jwt: aliceJWT)
        try a.setDelayForSyncingLocalChanges(.instantSyncingLocalChangesDisabled)

        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<200).map { UInt8($0 % 251) })
        let image = Annotation(uncheckedJSON: [
            "v": 2, "type": "pspdfkit/image", "pageIndex": 0, "bbox": [10, 10, 100, 80],
        ])
        let document = a.editableDocument
        #expect(throws: InstantError.self) { try document.attach(png, contentType: "not a type", to: image) }
        let attached = try document.attach(png, contentType: "image/png", to: image)
        let key = try #require(attached["imageAttachmentId"]?.stringValue)
        #expect(key == Attachment.key(for: png))
        let added = try document.add(attached)
        a.sync()
        #expect(try await eventually { a.documentState == .clean })
        #expect(try await server.serverAnnotations()[added.id ?? ""] != nil, "the server accepted the image")

        let b = try await server.downloaded(bob, jwt: bobJWT)
        let received = try #require(try b.editableDocument.annotation(withIdentifier: added.id ?? ""))
        let file = server.root.appendingPathComponent("out.png")
        let contentType = try await b.editableDocument.writeAttachment(
            withIdentifier: received["imageAttachmentId"]?.stringValue ?? "", to: file)
        #expect(contentType == "image/png")
        #expect(try Data(contentsOf: file) == png)
        await server.stop()
    }
}
