import Foundation
import InstantJSON
import InstantServer
import InstantTesting
import Testing

@testable import Instant

/// Two clients of one layer, Alice's and Bob's, downloaded, syncing by hand.
private struct TwoClients {
    let server: LiveServer
    let aliceClient: InstantClient
    let bobClient: InstantClient
    let alice: InstantDocumentDescriptor
    let bob: InstantDocumentDescriptor

    init(aliceGroup: String? = nil) async throws {
        server = try await LiveServer()
        aliceClient = try server.client("alice")
        bobClient = try server.client("bob")
        alice = try await server.downloaded(aliceClient, jwt: try await server.token(defaultGroup: aliceGroup))
        bob = try await server.downloaded(bobClient, jwt: try await server.token(user: "bob"))
        for descriptor in [alice, bob] {
            try descriptor.setDelayForSyncingLocalChanges(.instantSyncingLocalChangesDisabled)
        }
    }

    /// Alice's changes reach the server, then Bob.
    func aliceToBob() async throws {
        try await alice.syncAndWait()
        try await bob.syncAndWait()
    }

    /// Bob's changes reach the server, then Alice.
    func bobToAlice() async throws {
        try await bob.syncAndWait()
        try await alice.syncAndWait()
    }

    func stop() async {
        await server.stop()
        server.remove()
    }
}

@Suite("Comments, bookmarks, form values and server metadata through the document", .timeLimit(.minutes(10)))
struct DocumentRecordsTests {
    @Test func eachAnnotationCarriesTheServersMetadataAfterSync() async throws {
        let clients = try await TwoClients(aliceGroup: "reviewers")
        let document = clients.alice.editableDocument
        var added = try document.add(try note(text: "by alice"))
        #expect(try document.serverMetadata(for: added) == nil, "not on the server before the push")
        try await clients.aliceToBob()

        let created = try #require(try document.serverMetadata(for: added))
        #expect(created.group == "reviewers")
        #expect(created.createdBy == "alice")
        #expect(created.updatedBy == "alice")
        #expect(created.revision > 0)

        added = try #require(try clients.bob.editableDocument.annotation(withIdentifier: added.id ?? ""))
        #expect(try clients.bob.editableDocument.serverMetadata(for: added) == created, "the same on every client")
        added["text"] = ["format": "plain", "value": "edited by bob"]
        try clients.bob.editableDocument.update(added)
        try await clients.bobToAlice()
        let edited = try #require(try document.serverMetadata(forRecordWithIdentifier: added.id ?? ""))
        #expect(edited.group == "reviewers")
        #expect(edited.createdBy == "alice", "the creator stays the creator")
        #expect(edited.updatedBy == "bob")
        #expect(edited.revision > created.revision)

        try clients.bob.editableDocument.remove(added)
        try await clients.bobToAlice()
        #expect(try document.serverMetadata(for: added) == nil, "deleted on the server")
        await clients.stop()
    }

    @Test func commentThreadsAreAddedAndRepliedToOnTwoClients() async throws {
        let clients = try await TwoClients()
        let document = clients.alice.editableDocument
        let marker = try document.add(
            Annotation(type: .commentMarker, pageIndex: 1, bbox: Rect(left: 40, top: 40, width: 20, height: 20)))
        let rootID = try #require(marker.id)
        #expect {
            try document.add(Comment(rootId: "no-such-root", pageIndex: 0, text: AnnotationText(value: "lost")))
        } throws: { ($0 as? InstantError)?.code == .annotationNotFound }
        var first = try document.add(Comment(rootId: rootID, pageIndex: 1, text: AnnotationText(value: "Why?")))
        #expect(try document.comments(inThreadOf: rootID).map(\.id) == [first.id])
        try await clients.aliceToBob()

        let bobsDocument = clients.bob.editableDocument
        #expect(try bobsDocument.comments(inThreadOf: rootID).map(\.text?.value) == ["Why?"])
        let reply = try bobsDocument.add(Comment(rootId: rootID, pageIndex: 1, text: AnnotationText(value: "Because.")))
        try await clients.bobToAlice()
        #expect(try document.comments(inThreadOf: rootID).map(\.text?.value) == ["Why?", "Because."])
        #expect(try document.serverMetadata(forRecordWithIdentifier: reply.id ?? "")?.createdBy == "bob")

        first.text = AnnotationText(value: "Why this way?")
        try document.update(first)
        try await clients.aliceToBob()
        #expect(try bobsDocument.comment(withIdentifier: first.id ?? "")?.text?.value == "Why this way?")

        try bobsDocument.remove(reply)
        #expect {
            try bobsDocument.remove(reply)
        } throws: { ($0 as? InstantError)?.code == .recordNotFound }
        try await clients.bobToAlice()
        #expect(try document.comments().map(\.id) == [first.id])
        await clients.stop()
    }

    @Test func bookmarksAreAddedRenamedAndRemovedOnTwoClients() async throws {
        let clients = try await TwoClients()
        let document = clients.alice.editableDocument
        #expect {
            try document.add(Bookmark(uncheckedJSON: ["v": 1, "type": "pspdfkit/bookmark"]))
        } throws: { ($0 as? InstantError)?.code == .invalidRecord }
        let added = try document.add(Bookmark(name: "Second page", action: .goTo(pageIndex: 1)))
        try await clients.aliceToBob()

        let bobsDocument = clients.bob.editableDocument
        var received = try #require(try bobsDocument.bookmark(withIdentifier: added.id ?? ""))
        #expect(received.name == "Second page")
        #expect(received.action?.pageIndex == 1)
        received.name = "Page two"
        try bobsDocument.update(received)
        try await clients.bobToAlice()
        #expect(try document.bookmarks().map(\.name) == ["Page two"])

        try document.remove(received)
        try await clients.aliceToBob()
        #expect(try bobsDocument.bookmarks().isEmpty)
        await clients.stop()
    }

    @Test func formFieldValuesAreSetAndClearedOnTwoClients() async throws {
        let clients = try await TwoClients()
        let document = clients.alice.editableDocument
        try document.setFormFieldValue(FormFieldValue(name: "Reviewer", value: "Alice"))
        try document.setFormFieldValue(FormFieldValue(name: "Approved", value: ["Yes"]))
        #expect {
            try document.setFormFieldValue(FormFieldValue(name: "Count", value: 3))
        } throws: { ($0 as? InstantError)?.code == .invalidRecord }
        try await clients.aliceToBob()

        let bobsDocument = clients.bob.editableDocument
        #expect(try bobsDocument.formFieldValues().map(\.name) == ["Approved", "Reviewer"])
        #expect(try bobsDocument.formFieldValue(named: "Reviewer")?.value == "Alice")
        try bobsDocument.setFormFieldValue(FormFieldValue(name: "Reviewer", value: "Bob"))
        try await clients.bobToAlice()
        #expect(try document.formFieldValue(named: "Reviewer")?.value == "Bob")
        #expect(try document.serverMetadata(forRecordWithIdentifier: "formFieldValue:Reviewer")?.updatedBy == "bob")

        try document.removeFormFieldValue(named: "Approved")
        #expect {
            try document.removeFormFieldValue(named: "Approved")
        } throws: { ($0 as? InstantError)?.code == .recordNotFound }
        try await clients.aliceToBob()
        #expect(try bobsDocument.formFieldValue(named: "Approved") == nil)
        #expect(try bobsDocument.formFields().isEmpty, "the test PDF has no form fields")
        await clients.stop()
    }
}
