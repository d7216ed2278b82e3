import Foundation
import InstantJSON
import InstantTesting
import Synchronization
import Testing

@testable import InstantServer

@Suite("Storage: the rules of every backend", .timeLimit(.minutes(10)))
struct StorageConformanceTests {
    static func document(id: String, pdf: Data, title: String? = nil) -> StoredDocument {
        StoredDocument(
            id: id,
            title: title,
            sourcePDFSHA256: Attachment.key(for: pdf),
            byteSize: pdf.count,
            pages: [PageInfo(width: 612, height: 792)],
            pdfID: DocumentPDFID(permanent: "cGVybQ==", changing: "Y2hhbmdl"),
            isPasswordProtected: false,
            createdAt: Date(timeIntervalSince1970: 1_700_000_000)
        )
    }

    static func annotation(_ id: String, page: Int = 0, pdfObjectID: Int? = nil, note: String = "") -> RecordWrite {
        var object = "\"id\":\"\(id)\",\"type\":\"pspdfkit/note\",\"v\":2,\"pageIndex\":\(page),\"bbox\":[1,2,3,4]"
        if let pdfObjectID { object += ",\"pdfObjectId\":\(pdfObjectID)" }
        if !note.isEmpty { object += ",\"text\":\"\(note)\"" }
        return RecordWrite(id: id, kind: .annotation, pdfObjectID: pdfObjectID, content: Data("{\(object)}".utf8))
    }

    static let pdf = Data("%PDF-1.7\n% test bytes\n%%EOF\n".utf8)

    @Test(arguments: StorageKind.available) func documentsRoundTripAndShareTheirPDF(_ kind: StorageKind) async throws {
        let fixture = try await StorageFixture(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        try await storage.createDocument(
            Self.document(id: "a", pdf: Self.pdf, title: "Alpha"), pdf: Self.pdf, baseRecords: [])
        try await storage.createDocument(
            Self.document(id: "b", pdf: Self.pdf, title: "Beta"), pdf: Self.pdf, baseRecords: [])

        let stored = try #require(try await storage.document(id: "a"))
        #expect(stored == Self.document(id: "a", pdf: Self.pdf, title: "Alpha"))
        #expect(try await storage.pdf(sha256: Attachment.key(for: Self.pdf)) == Self.pdf)
        #expect(try await storage.pdfs.size(sha256: Attachment.key(for: Self.pdf)) == Self.pdf.count)

        await #expect(throws: StorageError.self) {
            try await storage.createDocument(Self.document(id: "a", pdf: Self.pdf), pdf: Self.pdf, baseRecords: [])
        }

        var query = DocumentQuery()
        query.order = .title
        query.ascending = true
        #expect(try await storage.listDocuments(query).documents.map(\.id) == ["a", "b"])
        query.titleFilter = "bet"
        #expect(try await storage.listDocuments(query).documents.map(\.id) == ["b"])

        // The PDF stays while another document uses it, and goes with the last one.
        #expect(try await storage.deleteDocument(id: "a"))
        #expect(try await storage.pdf(sha256: Attachment.key(for: Self.pdf)) == Self.pdf)
        #expect(try await storage.deleteDocument(id: "b"))
        #expect(try await storage.pdf(sha256: Attachment.key(for: Self.pdf)) == nil)
        #expect(try await storage.deleteDocument(id: "b") == false)
    }

    @Test(arguments: StorageKind.available) func aCopyHasTheLayersAndAttachmentsButNotTheHistory(
        _ kind: StorageKind
    ) async throws {
        let fixture = try await StorageFixture(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        try await storage.createDocument(
            Self.document(id: "d", pdf: Self.pdf), pdf: Self.pdf, baseRecords: [Self.annotation("12", pdfObjectID: 12)])
        let image = try await storage.putAttachment(documentID: "d", data: Data("jpeg".utf8), contentType: "image/jpeg")
        let imageRecord = RecordWrite(
            id: "img", kind: .annotation,
            content: Data(
                #"{"id":"img","type":"pspdfkit/image","v":2,"pageIndex":0,"bbox":[1,2,3,4],"imageAttachmentId":"\#(image)"}"#
                    .utf8))
        _ = try await storage.apply(
            [.put(Self.annotation("gone")), .put(imageRecord)], documentID: "d", layer: "",
            onConditionFailure: .abortBatch)
        _ = try await storage.apply([.delete(id: "gone")], documentID: "d", layer: "", onConditionFailure: .abortBatch)
        try await storage.createLayer(documentID: "d", name: "review", source: .empty)
        _ = try await storage.apply(
            [.put(Self.annotation("r1"))], documentID: "d", layer: "review", onConditionFailure: .abortBatch)

        let copy = try await storage.copyDocument(id: "d", to: "c")
        #expect(copy.sourcePDFSHA256 == Attachment.key(for: Self.pdf))
        #expect(try await storage.baseRecords(documentID: "c").map(\.id) == ["12"])
        #expect(try await storage.records(documentID: "c", layer: "", kind: nil).map(\.id) == ["12", "img"])
        #expect(try await storage.records(documentID: "c", layer: "review", kind: nil).map(\.id) == ["r1"])
        #expect(try await storage.layer(documentID: "c", name: "")?.revision == 1)
        // Tombstones stay with the original: the copy has no changes before revision 1.
        #expect(
            try await storage.changes(documentID: "c", layer: "", since: 0).records.map(\.id).sorted() == ["12", "img"])
        #expect(try await storage.attachment(documentID: "c", sha256: image)?.data == Data("jpeg".utf8))

        // One layer, as the default, with changes applied; a failed condition writes nothing.
        let one = try await storage.copyDocument(
            id: "d", to: "one", layer: "review", initialChanges: [.put(Self.annotation("new"))])
        #expect(try await storage.records(documentID: one.id, layer: "", kind: nil).map(\.id) == ["new", "r1"])
        #expect(try await storage.layers(documentID: one.id).map(\.name) == [""])
        await #expect {
            try await storage.copyDocument(
                id: "d", to: "refused", initialChanges: [.put(Self.annotation("12"), condition: .absent)])
        } throws: { ($0 as? StorageError)?.code == .recordExists }
        #expect(try await storage.document(id: "refused") == nil)
        await #expect {
            try await storage.copyDocument(id: "d", to: "c")
        } throws: { ($0 as? StorageError)?.code == .documentExists }
        await #expect {
            try await storage.copyDocument(id: "missing", to: "x")
        } throws: { ($0 as? StorageError)?.code == .documentNotFound }
        await #expect {
            try await storage.copyDocument(id: "d", to: "x", layer: "nope")
        } throws: { ($0 as? StorageError)?.code == .layerNotFound }

        // Deleting the original leaves the copy and the PDF they share.
        #expect(try await storage.deleteDocument(id: "d"))
        #expect(try await storage.pdf(sha256: copy.sourcePDFSHA256) == Self.pdf)
    }

    @Test(arguments: StorageKind.available) func revisionsAndChangesSinceIncludeTombstones(_ kind: StorageKind)
        async throws
    {
        let fixture = try await Self.fixtureWithDocument(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        #expect(try await storage.layer(documentID: "d", name: "")?.revision == 0)

        let first = try await storage.apply(
            [.put(Self.annotation("A")), .put(Self.annotation("B"))],
            documentID: "d",
            layer: "",
            onConditionFailure: .abortBatch
        )
        #expect(first.revision == 1)
        #expect(first.applied.map(\.revision) == [1, 1])
        let second = try await storage.apply(
            [.delete(id: "A", user: "u1")],
            documentID: "d",
            layer: "",
            onConditionFailure: .abortBatch
        )
        #expect(second.revision == 2)

        let changes = try await storage.changes(documentID: "d", layer: "", since: 1)
        #expect(changes.revision == 2)
        #expect(changes.records.map(\.id) == ["A"])
        #expect(changes.records.first?.isDeleted == true)
        #expect(changes.records.first?.updatedBy == "u1")
        #expect(try await storage.changes(documentID: "d", layer: "", since: 0).records.count == 2)
        #expect(try await storage.records(documentID: "d", layer: "", kind: .annotation).map(\.id) == ["B"])
    }

    @Test(arguments: StorageKind.available) func aFailedConditionWritesNothing(_ kind: StorageKind) async throws {
        let fixture = try await Self.fixtureWithDocument(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        _ = try await storage.apply(
            [.put(Self.annotation("A"))], documentID: "d", layer: "", onConditionFailure: .abortBatch)

        await #expect {
            try await storage.apply(
                [.put(Self.annotation("B")), .put(Self.annotation("A"), condition: .absent)],
                documentID: "d",
                layer: "",
                onConditionFailure: .abortBatch
            )
        } throws: { error in
            (error as? StorageError)?.code == .recordExists
        }
        #expect(try await storage.record(documentID: "d", layer: "", id: "B") == nil)
        #expect(try await storage.layer(documentID: "d", name: "")?.revision == 1)

        // Skipping applies the rest and reports the failure.
        let result = try await storage.apply(
            [.put(Self.annotation("B")), .put(Self.annotation("C"), condition: .exists)],
            documentID: "d",
            layer: "",
            onConditionFailure: .skipChange
        )
        #expect(result.applied.map(\.id) == ["B"])
        #expect(result.skipped.map(\.recordID) == ["C"])
        #expect(result.skipped.first?.error.code == .recordNotFound)
    }

    @Test(arguments: StorageKind.available) func deleteWinsOverAPutBasedOnAnOlderRevision(_ kind: StorageKind)
        async throws
    {
        let fixture = try await Self.fixtureWithDocument(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        _ = try await storage.apply(
            [.put(Self.annotation("A"))], documentID: "d", layer: "", onConditionFailure: .abortBatch)
        _ = try await storage.apply([.delete(id: "A")], documentID: "d", layer: "", onConditionFailure: .abortBatch)
        let result = try await storage.apply(
            [.put(Self.annotation("A"), condition: .notDeletedAfter(1))],
            documentID: "d",
            layer: "",
            onConditionFailure: .skipChange
        )
        #expect(result.skipped.first?.error.code == .recordDeleted)
        #expect(result.revision == 2)
        // A client that saw the deletion may create the record again.
        let again = try await storage.apply(
            [.put(Self.annotation("A"), condition: .notDeletedAfter(2))],
            documentID: "d",
            layer: "",
            onConditionFailure: .skipChange
        )
        #expect(again.applied.map(\.id) == ["A"])
    }

    @Test(arguments: StorageKind.available) func layersStartFromBaseRecordsOrACopy(_ kind: StorageKind) async throws {
        let fixture = try await StorageFixture(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        let base = [Self.annotation("12", pdfObjectID: 12)]
        try await storage.createDocument(Self.document(id: "d", pdf: Self.pdf), pdf: Self.pdf, baseRecords: base)

        let defaultRecords = try await storage.records(documentID: "d", layer: "", kind: nil)
        #expect(defaultRecords.map(\.id) == ["12"])
        #expect(defaultRecords.first?.pdfObjectID == 12)
        #expect(try await storage.baseRecords(documentID: "d").map(\.id) == ["12"])

        _ = try await storage.apply(
            [.put(Self.annotation("N"))], documentID: "d", layer: "", onConditionFailure: .abortBatch)
        try await storage.createLayer(documentID: "d", name: "copy", source: .layer(""))
        try await storage.createLayer(documentID: "d", name: "fresh", source: .baseRecords)
        try await storage.createLayer(documentID: "d", name: "empty", source: .empty)
        #expect(try await storage.records(documentID: "d", layer: "copy", kind: nil).map(\.id) == ["12", "N"])
        #expect(try await storage.records(documentID: "d", layer: "fresh", kind: nil).map(\.id) == ["12"])
        #expect(try await storage.records(documentID: "d", layer: "empty", kind: nil).isEmpty)
        #expect(try await storage.layer(documentID: "d", name: "empty")?.revision == 0)
        #expect(try await storage.layer(documentID: "d", name: "fresh")?.revision == 1)

        // A layer that was never written mirrors the base records when first used.
        let implicit = try await storage.layerCreatingIfNeeded(documentID: "d", name: "user-1")
        #expect(implicit.revision == 1)
        #expect(try await storage.records(documentID: "d", layer: "user-1", kind: nil).map(\.id) == ["12"])
        // The page count and a layer in one read; a layer used for the first time is created.
        let (pageCount, existing) = try await storage.pageCountAndLayer(documentID: "d", layer: "user-1")
        #expect(pageCount == 1)
        #expect(existing == implicit)
        #expect(try await storage.pageCountAndLayer(documentID: "d", layer: "user-2").layer.revision == 1)
        await #expect {
            try await storage.pageCountAndLayer(documentID: "missing", layer: "")
        } throws: { ($0 as? StorageError)?.code == .documentNotFound }

        // Layers are independent.
        _ = try await storage.apply(
            [.delete(id: "12")], documentID: "d", layer: "copy", onConditionFailure: .abortBatch)
        #expect(try await storage.records(documentID: "d", layer: "fresh", kind: nil).map(\.id) == ["12"])

        await #expect(throws: StorageError.self) {
            try await storage.createLayer(documentID: "d", name: "copy", source: .empty)
        }
        await #expect(throws: StorageError.self) {
            try await storage.createLayer(documentID: "d", name: "other", source: .layer("missing"))
        }
        #expect(
            try await storage.layers(documentID: "d").map(\.name) == ["", "copy", "empty", "fresh", "user-1", "user-2"])
        #expect(try await storage.deleteLayer(documentID: "d", name: "copy"))
        #expect(try await storage.layer(documentID: "d", name: "copy") == nil)
        await #expect(throws: StorageError.self) {
            try await storage.records(documentID: "d", layer: "copy", kind: nil)
        }
    }

    @Test(arguments: StorageKind.available)
    func attachmentsAndRevocationsPersistAcrossReopening(_ kind: StorageKind) async throws {
        let fixture = try await StorageFixture(kind)
        defer { fixture.remove() }
        let image = Data([0x89, 0x50, 0x4E, 0x47, 1, 2, 3])
        do {
            let storage = fixture.storage
            try await storage.createDocument(Self.document(id: "d", pdf: Self.pdf), pdf: Self.pdf, baseRecords: [])
            let sha = try await storage.putAttachment(documentID: "d", data: image, contentType: "image/png")
            #expect(sha == Attachment.key(for: image))
            #expect(try await storage.putAttachment(documentID: "d", data: image, contentType: "image/png") == sha)
            try await storage.revokeTokens(ids: ["token-1"])
            _ = try await storage.apply(
                [.put(Self.annotation("A"))], documentID: "d", layer: "", onConditionFailure: .abortBatch)
        }
        let reopened = try await fixture.reopened()
        #expect(try await reopened.attachment(documentID: "d", sha256: Attachment.key(for: image))?.data == image)
        #expect(
            try await reopened.attachment(documentID: "d", sha256: Attachment.key(for: image))?.contentType
                == "image/png")
        // Sent part by part: the size without the bytes, then any range of them.
        let content = try #require(
            try await reopened.attachmentContent(documentID: "d", sha256: Attachment.key(for: image)))
        #expect(content.contentType == "image/png")
        #expect(content.byteSize == image.count)
        #expect(try await content.read(0..<image.count) == image)
        #expect(try await content.read(2..<5) == image[2..<5])
        #expect(try await content.read(5..<image.count + 10) == image[5...], "a range past the end stops at the end")
        #expect(try await reopened.attachmentContent(documentID: "d", sha256: String(repeating: "0", count: 64)) == nil)
        #expect(try await reopened.isTokenRevoked(id: "token-1"))
        #expect(try await reopened.isTokenRevoked(id: "token-2") == false)
        #expect(try await reopened.layer(documentID: "d", name: "")?.revision == 1)
        #expect(try await reopened.record(documentID: "d", layer: "", id: "A")?.content == Self.annotation("A").content)
    }

    /// A node reads whether a token id was revoked at most once a second; revocations through it,
    /// or heard from another node, count at once.
    @Test(arguments: StorageKind.available)
    func aNodeReadsARevocationAtMostOnceASecondAndKnowsItsOwnAtOnce(_ kind: StorageKind) async throws {
        let fixture = try await StorageFixture(kind)
        defer { fixture.remove() }
        let now = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        let node = try await fixture.reopened(clock: { now.withLock { $0 } })
        let other = fixture.storage
        func advance(_ seconds: TimeInterval) { now.withLock { $0 += seconds } }

        #expect(try await node.isTokenRevoked(id: "a") == false)
        try await other.revokeTokens(ids: ["a"])
        advance(0.9)
        #expect(try await node.isTokenRevoked(id: "a") == false, "read less than a second ago")
        #expect(try await node.isTokenRevoked(id: "a", fromDatabase: true))
        #expect(try await node.isTokenRevoked(id: "a"), "a revocation read stays known")

        #expect(try await node.isTokenRevoked(id: "b") == false)
        try await other.revokeTokens(ids: ["b"])
        advance(1)
        #expect(try await node.isTokenRevoked(id: "b"), "read again once a second passed")

        #expect(try await node.isTokenRevoked(id: "c") == false)
        try await node.revokeTokens(ids: ["c"])
        #expect(try await node.isTokenRevoked(id: "c"), "revoked through the node itself: at once")

        #expect(try await node.isTokenRevoked(id: "d") == false)
        try await other.revokeTokens(ids: ["d"])
        node.noteRevoked(["d"])
        #expect(try await node.isTokenRevoked(id: "d"), "heard from the other node: at once")

        #expect(try await node.isTokenRevoked(id: "e") == false)
        advance(-5)
        try await other.revokeTokens(ids: ["e"])
        #expect(try await node.isTokenRevoked(id: "e"), "a clock set back reads again")
    }

    @Test(arguments: StorageKind.available) func concurrentWritersEachGetTheirOwnRevision(_ kind: StorageKind)
        async throws
    {
        let fixture = try await Self.fixtureWithDocument(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        let revisions = try await withThrowingTaskGroup(of: Int64.self) { group in
            for index in 0..<20 {
                group.addTask {
                    try await storage.apply(
                        [.put(Self.annotation("R\(index)"))],
                        documentID: "d",
                        layer: "",
                        onConditionFailure: .abortBatch
                    ).revision
                }
            }
            return try await group.reduce(into: [Int64]()) { $0.append($1) }
        }
        #expect(revisions.sorted() == Array(1...20))
        #expect(try await storage.records(documentID: "d", layer: "", kind: nil).count == 20)
    }

    /// Pushes sent at once share group transactions: a push retried while the first copy waits is
    /// applied once, each client's push ids are kept (per user: the clients share a client id, one
    /// of them anonymous), and every applied push has its own revision.
    @Test(arguments: StorageKind.available) func pushesCommittedTogetherStayExactlyOnce(_ kind: StorageKind)
        async throws
    {
        let fixture = try await Self.fixtureWithDocument(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        let clients =
            [ClientIdentity(userID: nil, clientID: "c")]
            + (1..<4).map { ClientIdentity(userID: "user-\($0)", clientID: "c") }
        let results = try await withThrowingTaskGroup(of: (Int, CommitResult).self) { group in
            for (index, client) in clients.enumerated() {
                // Each client's push 1, sent three times at once.
                for _ in 0..<3 {
                    group.addTask {
                        let result = try await storage.apply(
                            [.put(Self.annotation("A\(index)"))], documentID: "d", layer: "",
                            push: ClientPush(client: client, pushID: 1), onConditionFailure: .skipChange)
                        return (index, result)
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for index in clients.indices {
            let mine = results.filter { $0.0 == index }.map(\.1)
            #expect(mine.filter { !$0.isDuplicatePush }.count == 1, "client \(index)'s push applied once")
        }
        let applied = results.map(\.1).filter { !$0.isDuplicatePush }.map(\.revision)
        #expect(applied.sorted() == [1, 2, 3, 4])
        #expect(try await storage.layer(documentID: "d", name: "")?.revision == 4)
        for client in clients {
            #expect(try await storage.lastPushID(documentID: "d", layer: "", client: client) == 1)
        }
        // Later retries are found in the stored push state, the anonymous client's and a user's.
        for client in clients[0...1] {
            let late = try await storage.apply(
                [.put(Self.annotation("late"))], documentID: "d", layer: "",
                push: ClientPush(client: client, pushID: 1),
                onConditionFailure: .skipChange)
            #expect(late.isDuplicatePush)
        }
        let next = try await storage.apply(
            [.put(Self.annotation("next"))], documentID: "d", layer: "",
            push: ClientPush(client: clients[0], pushID: 2),
            onConditionFailure: .skipChange)
        #expect(next.revision == 5)
    }

    @Test(arguments: StorageKind.available) func aPushIsAppliedExactlyOnce(_ kind: StorageKind) async throws {
        let fixture = try await Self.fixtureWithDocument(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        let alice = ClientIdentity(userID: "alice", clientID: "client-1")
        let push = ClientPush(client: alice, pushID: 7)
        let first = try await storage.apply(
            [.put(Self.annotation("A", note: "one"))],
            documentID: "d",
            layer: "",
            push: push,
            onConditionFailure: .skipChange
        )
        #expect(first.revision == 1)
        #expect(first.isDuplicatePush == false)
        let retried = try await storage.apply(
            [.put(Self.annotation("A", note: "two"))],
            documentID: "d",
            layer: "",
            push: push,
            onConditionFailure: .skipChange
        )
        #expect(retried.isDuplicatePush)
        #expect(retried.revision == 1)
        let older = try await storage.apply(
            [.put(Self.annotation("B"))],
            documentID: "d",
            layer: "",
            push: ClientPush(client: alice, pushID: 3),
            onConditionFailure: .skipChange
        )
        #expect(older.isDuplicatePush)
        #expect(
            try await storage.record(documentID: "d", layer: "", id: "A")?.content
                == Self.annotation("A", note: "one").content)
        #expect(try await storage.record(documentID: "d", layer: "", id: "B") == nil)
        #expect(try await storage.lastPushID(documentID: "d", layer: "", client: alice) == 7)
        // Another client's push numbers are its own.
        let other = try await storage.apply(
            [.put(Self.annotation("B"))],
            documentID: "d",
            layer: "",
            push: ClientPush(client: ClientIdentity(userID: "alice", clientID: "client-2"), pushID: 1),
            onConditionFailure: .skipChange
        )
        #expect(other.revision == 2)
        // The same client id under another user is another client.
        let bob = ClientIdentity(userID: "bob", clientID: "client-1")
        #expect(try await storage.lastPushID(documentID: "d", layer: "", client: bob) == nil)
        let bobs = try await storage.apply(
            [.put(Self.annotation("C"))], documentID: "d", layer: "", push: ClientPush(client: bob, pushID: 1),
            onConditionFailure: .skipChange)
        #expect(bobs.isDuplicatePush == false)
        #expect(try await storage.lastPushID(documentID: "d", layer: "", client: alice) == 7)
        // A token whose user id is empty is in the anonymous scope: one client, one state.
        let anonymous = ClientIdentity(userID: nil, clientID: "client-9")
        _ = try await storage.apply(
            [.put(Self.annotation("D"))], documentID: "d", layer: "", push: ClientPush(client: anonymous, pushID: 1),
            onConditionFailure: .skipChange)
        let emptyUser = try await storage.apply(
            [.put(Self.annotation("E"))], documentID: "d", layer: "",
            push: ClientPush(client: ClientIdentity(userID: "", clientID: "client-9"), pushID: 1),
            onConditionFailure: .skipChange)
        #expect(emptyUser.isDuplicatePush)
        #expect(try await storage.record(documentID: "d", layer: "", id: "E") == nil)
    }

    /// A node remembers what its last group on a layer read and wrote (the push ids, the changes)
    /// while the layer is as that group left it; a layer deleted and created again at the same
    /// revision is another layer, whose pushes and records are its own.
    @Test(arguments: StorageKind.available) func aLayerCreatedAgainIsNotTheOneTheNodeRemembers(_ kind: StorageKind)
        async throws
    {
        let fixture = try await Self.fixtureWithDocument(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        let client = ClientIdentity(userID: "alice", clientID: "client-1")
        try await storage.createLayer(documentID: "d", name: "L", source: .empty)
        // A push that changes nothing (its one change is skipped) leaves the layer at revision 0
        // with the client's push id 5.
        let skipped = try await storage.apply(
            [.put(Self.annotation("A"), condition: .exists)], documentID: "d", layer: "L",
            push: ClientPush(client: client, pushID: 5), onConditionFailure: .skipChange)
        #expect(skipped.revision == 0)
        #expect(try await storage.lastPushID(documentID: "d", layer: "L", client: client) == 5)

        #expect(try await storage.deleteLayer(documentID: "d", name: "L"))
        try await storage.createLayer(documentID: "d", name: "L", source: .empty)
        // Revision 0 again, without push ids: push 1 is new here.
        let first = try await storage.apply(
            [.put(Self.annotation("A"))], documentID: "d", layer: "L", push: ClientPush(client: client, pushID: 1),
            onConditionFailure: .skipChange)
        #expect(first.isDuplicatePush == false)
        #expect(first.revision == 1)
        #expect(try await storage.records(documentID: "d", layer: "L", kind: nil).map(\.id) == ["A"])
        let retried = try await storage.apply(
            [.put(Self.annotation("B"))], documentID: "d", layer: "L", push: ClientPush(client: client, pushID: 1),
            onConditionFailure: .skipChange)
        #expect(retried.isDuplicatePush)
        let second = try await storage.apply(
            [.put(Self.annotation("B"))], documentID: "d", layer: "L", push: ClientPush(client: client, pushID: 2),
            onConditionFailure: .skipChange)
        #expect(second.revision == 2)
        #expect(try await storage.lastPushID(documentID: "d", layer: "L", client: client) == 2)
    }

    @Test(arguments: StorageKind.available) func aPushIDFarAboveTheLastOneIsRefusedAndChangesNothing(
        _ kind: StorageKind
    )
        async throws
    {
        let fixture = try await Self.fixtureWithDocument(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        let client = ClientIdentity(userID: nil, clientID: "client-1")
        for pushID in [Int64.max, ClientPush.maximumStep + 1] {
            await #expect(throws: StorageError.self) {
                try await storage.apply(
                    [.put(Self.annotation("A"))], documentID: "d", layer: "",
                    push: ClientPush(client: client, pushID: pushID), onConditionFailure: .skipChange)
            }
        }
        #expect(try await storage.lastPushID(documentID: "d", layer: "", client: client) == nil)
        #expect(try await storage.record(documentID: "d", layer: "", id: "A") == nil)
        let next = try await storage.apply(
            [.put(Self.annotation("A"))], documentID: "d", layer: "",
            push: ClientPush(client: client, pushID: ClientPush.maximumStep), onConditionFailure: .skipChange)
        #expect(next.revision == 1)
    }

    @Test(arguments: StorageKind.available) func aDocumentIsCreatedWithItsInitialContentInOneTransaction(
        _ kind: StorageKind
    ) async throws {
        let fixture = try await StorageFixture(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        let image = StoredAttachment(sha256: Attachment.key(for: Data([7])), contentType: "image/png", data: Data([7]))
        await #expect(throws: StorageError.self) {
            try await storage.createDocument(
                Self.document(id: "d", pdf: Self.pdf),
                pdf: Self.pdf,
                baseRecords: [Self.annotation("12", pdfObjectID: 12)],
                initialChanges: [.put(Self.annotation("N")), .put(Self.annotation("M"), condition: .exists)],
                attachments: [image]
            )
        }
        #expect(try await storage.document(id: "d") == nil)
        #expect(try await storage.pdf(sha256: Attachment.key(for: Self.pdf)) == nil)
        #expect(try await storage.attachment(documentID: "d", sha256: image.sha256) == nil)

        try await storage.createDocument(
            Self.document(id: "d", pdf: Self.pdf),
            pdf: Self.pdf,
            baseRecords: [Self.annotation("12", pdfObjectID: 12), Self.annotation("13", pdfObjectID: 13)],
            initialChanges: [.put(Self.annotation("N")), .delete(id: "13")],
            attachments: [image]
        )
        #expect(try await storage.records(documentID: "d", layer: "", kind: nil).map(\.id) == ["12", "N"])
        #expect(try await storage.layer(documentID: "d", name: "")?.revision == 2)
        #expect(try await storage.attachment(documentID: "d", sha256: image.sha256)?.data == image.data)
        // The base records stay whole for new layers.
        try await storage.createLayer(documentID: "d", name: "fresh", source: .baseRecords)
        #expect(try await storage.records(documentID: "d", layer: "fresh", kind: nil).map(\.id) == ["12", "13"])
    }

    /// Commits to one layer that arrive together are committed in groups: each still gets its own
    /// revision and its own outcome, and a commit refused on its own fails alone.
    @Test(arguments: StorageKind.available)
    func concurrentCommitsFailAlone(_ kind: StorageKind) async throws {
        let fixture = try await Self.fixtureWithDocument(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        enum Outcome: Equatable { case revision(Int64), refused(StorageError.Code) }
        let outcomes = await withTaskGroup(of: (Int, Outcome).self) { group in
            for index in 0..<40 {
                group.addTask {
                    let client = ClientIdentity(userID: "u", clientID: "c\(index)")
                    // Every tenth push jumps too far; every tenth plus five requires a missing record.
                    let pushID: Int64 = index % 10 == 0 ? ClientPush.maximumStep + 1 : 1
                    let condition: RecordCondition = index % 10 == 5 ? .exists : .none
                    do {
                        let result = try await storage.apply(
                            [.put(Self.annotation("R\(index)"), condition: condition)], documentID: "d", layer: "",
                            push: ClientPush(client: client, pushID: pushID), onConditionFailure: .abortBatch)
                        return (index, .revision(result.revision))
                    } catch {
                        return (index, .refused((error as? StorageError)?.code ?? .backendFailure))
                    }
                }
            }
            return await group.reduce(into: [Int: Outcome]()) { $0[$1.0] = $1.1 }
        }
        for index in 0..<40 {
            switch index % 10 {
            case 0: #expect(outcomes[index] == .refused(.pushOutOfRange))
            case 5: #expect(outcomes[index] == .refused(.recordNotFound))
            default: break
            }
        }
        let revisions = outcomes.values.compactMap { outcome -> Int64? in
            if case .revision(let revision) = outcome { return revision }
            return nil
        }
        #expect(revisions.sorted() == Array(1...32))
        #expect(try await storage.records(documentID: "d", layer: "", kind: nil).count == 32)
        #expect(try await storage.layer(documentID: "d", name: "")?.revision == 32)
    }

    /// A storage with a recorder of what it reports, and the document "d" (reported too).
    static func observedDocument(_ kind: StorageKind) async throws -> (StorageFixture, EventRecorder) {
        let heard = EventRecorder()
        let fixture = try await fixtureWithDocument(kind) { $0.storage.addObserver(heard) }
        return (fixture, heard)
    }

    /// A storage with the document "d" (with `preparing` done to it before the document is made).
    static func fixtureWithDocument(
        _ kind: StorageKind, preparing: (StorageFixture) -> Void = { _ in }
    ) async throws -> StorageFixture {
        let fixture = try await StorageFixture(kind)
        preparing(fixture)
        do {
            try await fixture.storage.createDocument(
                Self.document(id: "d", pdf: Self.pdf), pdf: Self.pdf, baseRecords: [])
        } catch {
            fixture.remove()
            throw error
        }
        return fixture
    }

    /// Observers get what each commit wrote, from the commit itself: every record as last written,
    /// by id, with the revision before and after; the commits of one group transaction each with
    /// their own revision, in order.
    @Test(arguments: StorageKind.available)
    func observersGetTheRecordsOfEachCommit(_ kind: StorageKind) async throws {
        let (fixture, heard) = try await Self.observedDocument(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        let written = try await storage.apply(
            [.put(Self.annotation("B")), .put(Self.annotation("A")), .put(Self.annotation("B", note: "again"))],
            documentID: "d", layer: "", onConditionFailure: .abortBatch)
        #expect(written.applied.count == 3, "B twice in the commit")
        _ = try await storage.apply(
            [.delete(id: "missing")], documentID: "d", layer: "", onConditionFailure: .skipChange)
        // Observers hear of a group after its callers have their outcomes.
        #expect(try await eventually { !heard.changes.isEmpty })
        let first = try #require(heard.changes.first?.first)
        #expect(heard.changes.count == 1, "a commit that changed nothing has no change set")
        #expect((first.documentID, first.layer, first.since, first.revision) == ("d", "", 0, 1))
        #expect(first.records.map(\.id) == ["A", "B"])
        let stored = try await storage.changes(documentID: "d", layer: "", since: 0).records
        #expect(first.records.map(\.content) == stored.map(\.content), "as stored: B as it was last written")
        #expect(first.records.allSatisfy { $0.revision == 1 && !$0.isDeleted })

        await withTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask {
                    _ = try? await storage.apply(
                        [.put(Self.annotation("R\(index)")), .delete(id: "A")], documentID: "d", layer: "",
                        onConditionFailure: .skipChange)
                }
            }
        }
        #expect(try await eventually { heard.changes.dropFirst().joined().count >= 20 })
        let grouped = heard.changes.dropFirst()
        #expect(grouped.contains { $0.count > 1 }, "commits that arrive together share a transaction")
        let sets = grouped.flatMap { $0 }
        #expect(sets.map(\.since) == Array(1...20))
        #expect(sets.map(\.revision) == Array(2...21))
        // The first commit of the twenty deleted A; the others wrote their own record only.
        #expect(sets.first?.records.filter { $0.id == "A" }.map(\.isDeleted) == [true])
        #expect(sets.dropFirst().allSatisfy { $0.records.count == 1 && $0.records[0].revision == $0.revision })
    }

    /// Observers hear how each group transaction went: its commits, its time and how it made sure
    /// that it saw the layer as the last writer left it. On SQLite every group locks the layer; on
    /// PostgreSQL the first group of a node locks it, the next reads it in one statement, and the
    /// ones after go by what the node remembers of it.
    @Test(arguments: StorageKind.available)
    func observersHearHowEachGroupWent(_ kind: StorageKind) async throws {
        let (fixture, heard) = try await Self.observedDocument(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        for index in 0..<3 {
            _ = try await storage.apply(
                [.put(Self.annotation("S\(index)"))], documentID: "d", layer: "", onConditionFailure: .abortBatch)
            // Observers hear of a group after its callers have their outcomes.
            #expect(try await eventually { heard.groups.count == index + 1 })
        }
        let paths: [GroupCommitReport.Path] =
            kind == .sqlite ? [.locked, .locked, .locked] : [.locked, .readFirst, .remembered]
        #expect(heard.groups.map(\.path) == paths)
        #expect(heard.groups.allSatisfy { $0.commits == 1 && !$0.ranAgain && $0.duration > .zero })

        await withTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask {
                    _ = try? await storage.apply(
                        [.put(Self.annotation("R\(index)"))], documentID: "d", layer: "",
                        onConditionFailure: .abortBatch)
                }
            }
        }
        #expect(try await eventually { heard.groups.reduce(0) { $0 + $1.commits } == 23 })
        #expect(heard.groups.contains { $0.commits > 1 }, "commits that arrive together share a transaction")
    }

    /// A page of a layer's records comes from the database filtered and paged: live records of one
    /// kind, by id, on one page of the document when asked, from an offset, with whether more follow.
    @Test(arguments: StorageKind.available)
    func aPageOfRecordsIsFilteredAndPagedByTheDatabase(_ kind: StorageKind) async throws {
        let fixture = try await Self.fixtureWithDocument(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        let writes = (0..<7).map { Self.annotation("a\($0)", page: $0 % 2) }
        _ = try await storage.apply(
            writes.map { .put($0) } + [.put(Self.comment("c", root: "a0")), .put(Self.annotation("gone", page: 1))],
            documentID: "d", layer: "", onConditionFailure: .abortBatch)
        _ = try await storage.apply([.delete(id: "gone")], documentID: "d", layer: "", onConditionFailure: .abortBatch)

        let all = try await storage.recordPage(documentID: "d", layer: "", kind: .annotation)
        #expect(all.records.map(\.id) == (0..<7).map { "a\($0)" }, "live annotations only, by id")
        #expect(!all.hasMore)
        let second = try await storage.recordPage(documentID: "d", layer: "", kind: .annotation, offset: 2, limit: 3)
        #expect(second.records.map(\.id) == ["a2", "a3", "a4"])
        #expect(second.hasMore)
        let last = try await storage.recordPage(documentID: "d", layer: "", kind: .annotation, offset: 5, limit: 2)
        #expect(last.records.map(\.id) == ["a5", "a6"])
        #expect(!last.hasMore, "exactly the last ones: nothing follows")
        let onPage1 = try await storage.recordPage(documentID: "d", layer: "", kind: .annotation, onPage: 1)
        #expect(onPage1.records.map(\.id) == ["a1", "a3", "a5"], "the deleted one on page 1 is not listed")
        let onPage0 = try await storage.recordPage(
            documentID: "d", layer: "", kind: .annotation, onPage: 0, offset: 1, limit: 2)
        #expect(onPage0.records.map(\.id) == ["a2", "a4"])
        #expect(onPage0.hasMore)
        let none = try await storage.recordPage(documentID: "d", layer: "", kind: .annotation, onPage: 5)
        #expect(none.records.isEmpty && !none.hasMore)
        await #expect(throws: StorageError.self) {
            _ = try await storage.recordPage(documentID: "d", layer: "missing", kind: .annotation)
        }
    }

    /// Groups overlap (the next opens its transaction while the one before commits): with 10
    /// clients pushing 20 times each, every push takes a revision of its own, nothing is lost,
    /// each client's last push id is its last push, and observers hear the commits in order.
    @Test(arguments: StorageKind.available)
    func overlappingGroupsLoseNothingAndReportInOrder(_ kind: StorageKind) async throws {
        let (fixture, heard) = try await Self.observedDocument(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        let revisions = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for client in 0..<10 {
                group.addTask {
                    var revisions: [Int64] = []
                    for push in 1...20 {
                        let result = try await storage.apply(
                            [.put(Self.annotation("c\(client)-\(push)"))], documentID: "d", layer: "",
                            push: ClientPush(
                                client: ClientIdentity(userID: "u", clientID: "c\(client)"), pushID: Int64(push)),
                            onConditionFailure: .skipChange)
                        revisions.append(result.revision)
                    }
                    return revisions
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(revisions.sorted() == Array(1...200), "every push its own revision")
        #expect(try await storage.layer(documentID: "d", name: "")?.revision == 200)
        #expect(try await storage.records(documentID: "d", layer: "", kind: .annotation).count == 200)
        for client in 0..<10 {
            let identity = ClientIdentity(userID: "u", clientID: "c\(client)")
            #expect(try await storage.lastPushID(documentID: "d", layer: "", client: identity) == 20)
        }
        let sets = heard.changes.flatMap { $0 }
        #expect(sets.map(\.since) == Array(0..<200))
        #expect(sets.map(\.revision) == Array(1...200))
    }

    /// A commit to the layer `""` of the document `d` that puts `id` and holds the layer while it
    /// decides, until `release` is called: the commits after it queue and form one group. Returns
    /// once the commit holds the layer.
    static func holdLayer(_ storage: InstantStorage, putting id: String) async
        -> (commit: Task<CommitResult, any Error>, release: @Sendable () -> Void)
    {
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        let (deciding, decidingSignal) = AsyncStream.makeStream(of: Void.self)
        let commit = Task {
            try await storage.apply(documentID: "d", layer: "", push: nil) { _ in
                decidingSignal.yield()
                for await _ in released { break }
                return LayerDecision(changes: [.put(Self.annotation(id))], outcome: ())
            }.result
        }
        for await _ in deciding { break }
        return (commit, { release.yield() })
    }

    /// Runs `count` commits in one group: a first commit (`first`) holds the layer until every
    /// one of them waits behind it; their results, in order.
    static func oneGroup<Result: Sendable>(
        _ storage: InstantStorage, count: Int, commit: @escaping @Sendable (Int) async throws -> Result
    ) async throws -> [Result] {
        let key = LayerCommitQueue.LayerKey(documentID: "d", layer: "")
        let (holder, release) = await holdLayer(storage, putting: "first")
        var commits: [Task<Result, any Error>] = []
        for index in 0..<count {
            commits.append(Task { try await commit(index) })
            #expect(try await eventually { storage.commitQueue.waitingCount(on: key) == index + 1 })
        }
        release()
        _ = try await holder.value
        var results: [Result] = []
        for commit in commits { results.append(try await commit.value) }
        return results
    }

    /// The commits of one group transaction are decided and written in memory and stored together:
    /// each still sees what the ones before it wrote (a put, a comment on it, the put's deletion,
    /// which deletes the comment), and each answer reads the layer as the whole group left it.
    @Test(arguments: StorageKind.available)
    func theCommitsOfOneGroupSeeEachOthersWrites(_ kind: StorageKind) async throws {
        let fixture = try await Self.fixtureWithDocument(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        let batches: [[RecordChange]] = [
            [.put(Self.annotation("A"), condition: .absent)],
            [.put(Self.comment("c", root: "A"))],
            [.delete(id: "A", condition: .exists)],
        ]
        let results = try await Self.oneGroup(storage, count: batches.count) { index in
            let changes = batches[index]
            let (result, _, answer) = try await storage.apply(
                documentID: "d", layer: "", push: nil, reading: changes.map(\.recordID),
                deciding: { reader in
                    // What the commits before it wrote, without a read of the database.
                    if index == 2 {
                        let comment = try await reader.record(id: "c")
                        #expect(comment?.isDeleted == false)
                    }
                    return LayerDecision(changes: changes, outcome: ())
                },
                answerCarries: AnsweredChanges(after: 1),
                answering: { reader, _, _ in
                    #expect(reader.pageCount == 1)
                    return try await reader.records(changedAfter: 1).map { "\($0.id)@\($0.revision)" }
                })
            return (result, answer ?? [])
        }
        #expect(results.map(\.0.revision) == [2, 3, 4])
        #expect(results.allSatisfy { $0.0.skipped.isEmpty }, "each condition held against the writes before it")
        #expect(Set(results[2].0.applied.map(\.id)) == ["A", "c"], "the deletion took the comment put before it")
        for (_, answer) in results {
            #expect(answer == ["A@4", "c@4"], "every answer reads the layer as the group left it")
        }
        let stored = try await storage.changes(documentID: "d", layer: "", since: 0).records
        #expect(stored.map { "\($0.id)@\($0.revision):\($0.isDeleted)" } == ["first@1:false", "A@4:true", "c@4:true"])
    }

    /// The answers of one group share the records they carry: each reads the changes after its
    /// own revision as the end of the same records, and what they derive from them is made once.
    @Test(arguments: StorageKind.available)
    func theAnswersOfOneGroupShareTheirRecords(_ kind: StorageKind) async throws {
        let fixture = try await Self.fixtureWithDocument(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        let reads: [(answersAfter: Int64, readsAfter: Int64)] = [(0, 0), (1, 1), (1, 3)]
        let answers = try await Self.oneGroup(storage, count: reads.count) { index in
            let read = reads[index]
            let (_, _, answer) = try await storage.apply(
                documentID: "d", layer: "", push: nil, reading: [],
                deciding: { _ in LayerDecision(changes: [.put(Self.annotation("n\(index)"))], outcome: ()) },
                answerCarries: AnsweredChanges(after: read.answersAfter),
                answering: { reader, _, _ in
                    let (records, shared) = try await reader.changes(after: read.readsAfter)
                    let derived = shared?.derived(RecordNames.self).names
                    return (ids: records.map { "\($0.id)@\($0.revision)" }, shared: shared, derived: derived ?? [])
                })
            return try #require(answer)
        }
        #expect(answers[0].ids == ["first@1", "n0@2", "n1@3", "n2@4"])
        #expect(answers[1].ids == ["n0@2", "n1@3", "n2@4"])
        #expect(answers[2].ids == ["n2@4"])
        let shared = try #require(answers[0].shared)
        #expect(answers.allSatisfy { $0.shared === shared }, "one group, one set of records for its answers")
        #expect(answers.allSatisfy { $0.derived == answers[0].ids }, "derived from all the shared records")
        #expect(shared.hasDerived(RecordNames.self), "a derivation made is kept")
        #expect(shared.recordsToDerive(RecordNames.self).isEmpty)
        // A reader outside a group reads the database, and shares nothing.
        _ = try await storage.apply(
            [.put(Self.annotation("late"))], documentID: "d", layer: "", push: nil, onConditionFailure: .skipChange)
        let alone = try await storage.read(documentID: "d", layer: "") { reader in
            let (records, shared) = try await reader.changes(after: 4)
            return (records.map(\.id), shared == nil)
        }
        #expect(alone == (["late"], true))
    }

    /// What the answers of a group derive from the records they share is made once, after the
    /// commit and before any answer is delivered, when one of them asks for it, large records too
    /// (away from the loop of the group commits); the change sets the observers get hold the same
    /// records.
    @Test(arguments: StorageKind.available)
    func whatTheAnswersDeriveIsMadeBeforeTheyAreDelivered(_ kind: StorageKind) async throws {
        let (fixture, heard) = try await Self.observedDocument(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        let large = String(repeating: "x", count: LargeWork.writingThreshold)
        // Whether each group's answers ask for the derivation, and the note its commits write.
        for (asking, note) in [([true, false], ""), ([false, false], ""), ([true, true], large)] {
            let answers = try await Self.oneGroup(storage, count: asking.count) { index in
                let (_, _, answer) = try await storage.apply(
                    documentID: "d", layer: "", push: nil, reading: [],
                    deciding: { _ in
                        LayerDecision(changes: [.put(Self.annotation("n\(index)", note: note))], outcome: ())
                    },
                    answerCarries: AnsweredChanges(after: 1, derivation: asking[index] ? RecordNames.self : nil),
                    answering: { reader, _, _ in try await reader.changes(after: 1).shared })
                // As its caller has it.
                let shared = try #require(answer ?? nil)
                return (shared, shared.hasDerived(RecordNames.self))
            }
            let shared = answers[0].0
            #expect(answers.allSatisfy { $0.0 === shared })
            let derived = asking.contains(true)
            #expect(answers.allSatisfy { $0.1 == derived }, "derived before the answers went out: \(asking)")
            let revision = try await storage.layer(documentID: "d", name: "")?.revision ?? 0
            #expect(try await eventually { heard.changes.last?.last?.revision == revision })
            let sets = try #require(heard.changes.last)
            #expect(sets.count == asking.count)
            #expect(sets.allSatisfy { $0.sharedRecords === shared }, "the observers get the answers' records")
        }
    }

    /// The answers of a group list its writes by revision, then id, whatever the order in which its
    /// commits made them, each record as last written.
    @Test(arguments: StorageKind.available)
    func aGroupsAnswersListItsWritesByRevisionThenID(_ kind: StorageKind) async throws {
        let fixture = try await Self.fixtureWithDocument(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        for batches in [[["z", "b"], ["m", "a"]], [["y", "c"], ["x", "y"]]] {
            let answers = try await Self.oneGroup(storage, count: batches.count) { index in
                let ids = batches[index]
                let (_, _, answer) = try await storage.apply(
                    documentID: "d", layer: "", push: nil, reading: ids,
                    deciding: { _ in LayerDecision(changes: ids.map { .put(Self.annotation($0)) }, outcome: ()) },
                    answerCarries: AnsweredChanges(after: 1),
                    answering: { reader, result, _ in
                        // The group's writes: after the revision before its first commit.
                        try await reader.records(changedAfter: result.revision - Int64(index) - 1).map {
                            "\($0.id)@\($0.revision)"
                        }
                    })
                return answer ?? []
            }
            #expect(answers.count == 2)
            #expect(answers.allSatisfy { $0 == answers[0] })
            if batches[0] == ["z", "b"] {
                #expect(answers[0] == ["b@2", "z@2", "a@3", "m@3"])
            } else {
                #expect(answers[0] == ["c@5", "x@6", "y@6"], "y as the second commit wrote it")
            }
        }
    }

    /// Records read by id come once each, however often their id is asked, tombstones included;
    /// ids without a record give nothing, and ids are taken as they are, quotes and all.
    @Test(arguments: StorageKind.available)
    func recordsReadByIDComeOnceEach(_ kind: StorageKind) async throws {
        let fixture = try await Self.fixtureWithDocument(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        let odd = #"q"u\o,te"#
        _ = try await storage.apply(
            ["a", "b", odd, "gone"].map { .put(Self.annotation($0)) }, documentID: "d", layer: "", push: nil,
            onConditionFailure: .skipChange)
        _ = try await storage.apply(
            [.delete(id: "gone")], documentID: "d", layer: "", push: nil, onConditionFailure: .skipChange)
        let read = try await storage.backend.read { transaction in
            try await transaction.records(
                documentID: "d", layer: "", ids: ["a", "gone", "a", "missing", odd, "b", "a"])
        }
        #expect(read.map(\.id).sorted() == ["a", "b", "gone", odd].sorted())
        #expect(read.first { $0.id == "gone" }?.isDeleted == true)
    }

    /// The names of shared records, and how many of them a derivation named itself rather than take
    /// from the value it extends.
    struct RecordNames: RecordsDerivation {
        var names: [String]
        var namedHere: Int

        init(_ records: [StoredRecord], extending earlier: (value: RecordNames, offset: Int, count: Int)?) {
            let carried = earlier.map { Array($0.value.names[$0.offset..<$0.offset + $0.count]) } ?? []
            let own = records[carried.count...].map { "\($0.id)@\($0.revision)" }
            names = carried + own
            namedHere = own.count
        }
    }

    /// A group whose answers carry the records of the group before it, as the node remembers them,
    /// extends what that group's answers derived from them: each record is derived from once while
    /// answer after answer carries it. What a group rewrote is derived again.
    @Test(arguments: StorageKind.available)
    func theNextGroupExtendsWhatTheGroupBeforeDerived(_ kind: StorageKind) async throws {
        let fixture = try await Self.fixtureWithDocument(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        @Sendable func group(_ changes: [RecordChange]) async throws -> (names: [String], namedHere: Int) {
            let (_, _, answer) = try await storage.apply(
                documentID: "d", layer: "", push: nil, reading: changes.map(\.recordID),
                deciding: { _ in LayerDecision(changes: changes, outcome: ()) },
                answerCarries: AnsweredChanges(after: 0),
                answering: { reader, _, _ in
                    let (_, shared) = try await reader.changes(after: 0)
                    let derived = try #require(shared).derived(RecordNames.self)
                    return (derived.names, derived.namedHere)
                })
            return try #require(answer)
        }
        @Sendable func group(putting ids: [String]) async throws -> (names: [String], namedHere: Int) {
            try await group(ids.map { .put(Self.annotation($0)) })
        }
        // The first groups on the layer lock it, then read it; the next go by the node's memory.
        let first = try await group(putting: ["a"])
        #expect(first.names == ["a@1"])
        _ = try await group(putting: ["b"])
        let third = try await group(putting: ["c", "d"])
        #expect(third.names == ["a@1", "b@2", "c@3", "d@3"])
        #expect(third.namedHere == 2, "only its own records: the others as the group before named them")
        let fourth = try await group(putting: ["e"])
        #expect(fourth.names == ["a@1", "b@2", "c@3", "d@3", "e@4"])
        #expect(fourth.namedHere == 1)
        // A record written again leaves the carried ones: all are derived again, in their new order.
        let fifth = try await group(putting: ["b"])
        #expect(fifth.names == ["a@1", "c@3", "d@3", "e@4", "b@5"])
        #expect(fifth.namedHere == 5)
        // So does a comment deleted with its thread, which the deletion does not name.
        _ = try await group([.put(Self.comment("k", root: "c"))])
        let seventh = try await group([.delete(id: "c")])
        #expect(seventh.names == ["a@1", "d@3", "e@4", "b@5", "c@7", "k@7"])
    }

    /// A commit of more records than one statement of a backend takes (PostgreSQL writes 500 rows
    /// per statement) ends its group as a small one does: every record stored once, the answer
    /// reading them with what was there before, the push id and the revision stored.
    @Test(arguments: StorageKind.available)
    func aCommitOfManyRecordsEndsItsGroupWhole(_ kind: StorageKind) async throws {
        let fixture = try await Self.fixtureWithDocument(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        _ = try await storage.apply(
            [.put(Self.annotation("before"))], documentID: "d", layer: "", push: nil, onConditionFailure: .skipChange)
        let client = ClientIdentity(userID: "u", clientID: "phone")
        let changes = (0..<1_234).map { RecordChange.put(Self.annotation(String(format: "n%04d", $0))) }
        let (result, _, answer) = try await storage.apply(
            documentID: "d", layer: "", push: ClientPush(client: client, pushID: 7),
            deciding: { _ in LayerDecision(changes: changes, outcome: ()) },
            answerCarries: AnsweredChanges(after: 0),
            answering: { reader, _, _ in try await reader.records(changedAfter: 0).map { "\($0.id)@\($0.revision)" } })
        #expect(result.revision == 2)
        #expect(result.applied.count == 1_234)
        let expected = ["before@1"] + (0..<1_234).map { String(format: "n%04d@2", $0) }
        #expect(answer == expected, "the answer lists each record once, by revision then id")
        #expect(try await storage.lastPushID(documentID: "d", layer: "", client: client) == 7)
        #expect(try await storage.layer(documentID: "d", name: "")?.revision == 2)
        #expect(try await storage.records(documentID: "d", layer: "", kind: .annotation).count == 1_235)
    }

    static func comment(_ id: String, root: String) -> RecordWrite {
        RecordWrite(
            id: id, kind: .comment,
            content: Data(#"{"id":"\#(id)","type":"pspdfkit/comment","v":2,"rootId":"\#(root)","pageIndex":0}"#.utf8))
    }

    /// Deleting an annotation deletes the comments of its thread, through any writer: stored ones,
    /// and ones put earlier in the same batch.
    @Test(arguments: StorageKind.available)
    func deletingAnAnnotationDeletesItsThread(_ kind: StorageKind) async throws {
        let fixture = try await Self.fixtureWithDocument(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        _ = try await storage.apply(
            [
                .put(Self.annotation("A")), .put(Self.annotation("B")), .put(Self.comment("c1", root: "A")),
                .put(Self.comment("c2", root: "B")),
            ],
            documentID: "d", layer: "", onConditionFailure: .abortBatch)
        let result = try await storage.apply(
            [.put(Self.comment("c3", root: "A")), .delete(id: "A", user: "u1", condition: .exists)],
            documentID: "d", layer: "", onConditionFailure: .abortBatch)
        #expect(result.applied.map(\.id) == ["c3", "A", "c1", "c3"])
        #expect(result.applied.dropFirst().allSatisfy { $0.isDeleted && $0.updatedBy == "u1" })
        #expect(try await storage.records(documentID: "d", layer: "", kind: nil).map(\.id) == ["B", "c2"])
        #expect(try await storage.record(documentID: "d", layer: "", id: "c3")?.isDeleted == true)
    }

    /// The server keeps who created a record: an edit by another user changes only `updatedBy`,
    /// and a record created again after its deletion belongs to its new creator.
    @Test(arguments: StorageKind.available)
    func theCreatorOfARecordIsKept(_ kind: StorageKind) async throws {
        let fixture = try await Self.fixtureWithDocument(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        func put(_ user: String) -> RecordChange {
            var write = Self.annotation("A")
            write.user = user
            return .put(write)
        }
        _ = try await storage.apply([put("alice")], documentID: "d", layer: "", onConditionFailure: .abortBatch)
        _ = try await storage.apply([put("bob")], documentID: "d", layer: "", onConditionFailure: .abortBatch)
        let edited = try #require(try await storage.record(documentID: "d", layer: "", id: "A"))
        #expect(edited.createdBy == "alice")
        #expect(edited.updatedBy == "bob")
        _ = try await storage.apply([.delete(id: "A")], documentID: "d", layer: "", onConditionFailure: .abortBatch)
        _ = try await storage.apply([put("carol")], documentID: "d", layer: "", onConditionFailure: .abortBatch)
        #expect(try await storage.record(documentID: "d", layer: "", id: "A")?.createdBy == "carol")
    }

    /// Observers hear of every committed change, once, after the commit, and of nothing that
    /// changed nothing.
    @Test(arguments: StorageKind.available)
    func observersHearOfCommittedChanges(_ kind: StorageKind) async throws {
        let (fixture, heard) = try await Self.observedDocument(kind)
        defer { fixture.remove() }
        let storage = fixture.storage
        _ = try await storage.apply(
            [.put(Self.annotation("A"))], documentID: "d", layer: "", onConditionFailure: .abortBatch)
        _ = try await storage.apply(
            [.delete(id: "missing")], documentID: "d", layer: "", onConditionFailure: .skipChange)
        await #expect(throws: StorageError.self) {
            try await storage.apply(
                [.put(Self.annotation("B"), condition: .exists)], documentID: "d", layer: "",
                onConditionFailure: .abortBatch)
        }
        try await storage.createLayer(documentID: "d", name: "review", source: .layer(""))
        try await storage.revokeTokens(ids: ["t1"])
        _ = try await storage.deleteDocument(id: "d")
        #expect(
            heard.events == [
                .revisionChanged(documentID: "d", layer: "", revision: 0),
                .revisionChanged(documentID: "d", layer: "", revision: 1),
                .revisionChanged(documentID: "d", layer: "review", revision: 1),
                .tokensRevoked(["t1"]),
                .layerRemoved(documentID: "d", layer: ""),
                .layerRemoved(documentID: "d", layer: "review"),
            ])
    }
}

/// Keeps the events, the change sets and the group reports a storage reports, in order.
final class EventRecorder: StorageObserver {
    private let recorded = Mutex<[StorageEvent]>([])
    private let recordedChanges = Mutex<[[LayerChangeSet]]>([])
    private let recordedGroups = Mutex<[GroupCommitReport]>([])
    var events: [StorageEvent] { recorded.withLock { $0 } }
    /// The change sets of each transaction that wrote records.
    var changes: [[LayerChangeSet]] { recordedChanges.withLock { $0 } }
    /// How each group transaction went.
    var groups: [GroupCommitReport] { recordedGroups.withLock { $0 } }
    func recordsCommitted(_ changes: [LayerChangeSet]) async { recordedChanges.withLock { $0.append(changes) } }
    func storageCommitted(_ events: [StorageEvent]) async { recorded.withLock { $0 += events } }
    func groupCommitted(_ report: GroupCommitReport) { recordedGroups.withLock { $0.append(report) } }
}
