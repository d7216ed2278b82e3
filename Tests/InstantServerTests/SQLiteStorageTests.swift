import Foundation
import GRDB
import InstantJSON
import Testing

@testable import InstantServer

@Suite("SQLite storage")
struct SQLiteStorageTests {
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

    @Test func documentsRoundTripAndShareTheirPDF() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try SQLiteStorage(directory: directory.url)
        try await storage.createDocument(
            Self.document(id: "a", pdf: Self.pdf, title: "Alpha"), pdf: Self.pdf, baseRecords: [])
        try await storage.createDocument(
            Self.document(id: "b", pdf: Self.pdf, title: "Beta"), pdf: Self.pdf, baseRecords: [])

        let stored = try #require(try await storage.document(id: "a"))
        #expect(stored == Self.document(id: "a", pdf: Self.pdf, title: "Alpha"))
        #expect(try await storage.pdf(sha256: Attachment.key(for: Self.pdf)) == Self.pdf)
        let files = try FileManager.default.contentsOfDirectory(
            atPath: directory.url.appendingPathComponent("pdfs").path)
        #expect(files == ["\(Attachment.key(for: Self.pdf)).pdf"])

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

    @Test func revisionsAndChangesSinceIncludeTombstones() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try SQLiteStorage(directory: directory.url)
        try await storage.createDocument(Self.document(id: "d", pdf: Self.pdf), pdf: Self.pdf, baseRecords: [])
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

    @Test func aFailedConditionWritesNothing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try SQLiteStorage(directory: directory.url)
        try await storage.createDocument(Self.document(id: "d", pdf: Self.pdf), pdf: Self.pdf, baseRecords: [])
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

    @Test func deleteWinsOverAPutBasedOnAnOlderRevision() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try SQLiteStorage(directory: directory.url)
        try await storage.createDocument(Self.document(id: "d", pdf: Self.pdf), pdf: Self.pdf, baseRecords: [])
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

    @Test func layersStartFromBaseRecordsOrACopy() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try SQLiteStorage(directory: directory.url)
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
        #expect(try await storage.layers(documentID: "d").map(\.name) == ["", "copy", "empty", "fresh", "user-1"])
        #expect(try await storage.deleteLayer(documentID: "d", name: "copy"))
        #expect(try await storage.layer(documentID: "d", name: "copy") == nil)
        await #expect(throws: StorageError.self) {
            try await storage.records(documentID: "d", layer: "copy", kind: nil)
        }
    }

    @Test func attachmentsAndRevocationsPersistAcrossReopening() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let image = Data([0x89, 0x50, 0x4E, 0x47, 1, 2, 3])
        do {
            let storage = try SQLiteStorage(directory: directory.url)
            try await storage.createDocument(Self.document(id: "d", pdf: Self.pdf), pdf: Self.pdf, baseRecords: [])
            let sha = try await storage.putAttachment(documentID: "d", data: image, contentType: "image/png")
            #expect(sha == Attachment.key(for: image))
            #expect(try await storage.putAttachment(documentID: "d", data: image, contentType: "image/png") == sha)
            try await storage.revokeTokens(ids: ["token-1"])
            _ = try await storage.apply(
                [.put(Self.annotation("A"))], documentID: "d", layer: "", onConditionFailure: .abortBatch)
        }
        let reopened = try SQLiteStorage(directory: directory.url)
        #expect(try await reopened.attachment(documentID: "d", sha256: Attachment.key(for: image))?.data == image)
        #expect(
            try await reopened.attachment(documentID: "d", sha256: Attachment.key(for: image))?.contentType
                == "image/png")
        #expect(try await reopened.isTokenRevoked(id: "token-1"))
        #expect(try await reopened.isTokenRevoked(id: "token-2") == false)
        #expect(try await reopened.layer(documentID: "d", name: "")?.revision == 1)
        #expect(try await reopened.record(documentID: "d", layer: "", id: "A")?.content == Self.annotation("A").content)
    }

    @Test func concurrentWritersEachGetTheirOwnRevision() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try SQLiteStorage(directory: directory.url)
        try await storage.createDocument(Self.document(id: "d", pdf: Self.pdf), pdf: Self.pdf, baseRecords: [])
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

    @Test func aPushIsAppliedExactlyOnce() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try SQLiteStorage(directory: directory.url)
        try await storage.createDocument(Self.document(id: "d", pdf: Self.pdf), pdf: Self.pdf, baseRecords: [])
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
    }

    /// A database of the schema before client identities keeps its clients' last push ids, under the
    /// anonymous user scope.
    @Test func exactlyOnceStateSurvivesTheClientIdentityMigration() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("instant.sqlite").path
        let queue = try DatabaseQueue(path: path)
        try SQLiteStorage.migrator.migrate(queue, upTo: "v2-comment-threads")
        try await queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO documents (id, sha256, byte_size, pages, password_protected, created_at)
                    VALUES ('d', 'x', 1, '[]', 0, 0);
                    INSERT INTO layers (document_id, name, revision) VALUES ('d', '', 4);
                    INSERT INTO client_pushes (document_id, layer, client_id, push_id, revision)
                    VALUES ('d', '', 'client-1', 9, 4);
                    """)
        }
        try queue.close()
        let storage = try SQLiteStorage(
            databasePath: path, pdfDirectory: directory.url.appendingPathComponent("pdfs"))
        let client = ClientIdentity(userID: nil, clientID: "client-1")
        #expect(try await storage.lastPushID(documentID: "d", layer: "", client: client) == 9)
        #expect(
            try await storage.lastPushID(
                documentID: "d", layer: "", client: ClientIdentity(userID: "alice", clientID: "client-1")) == nil)
    }

    @Test func aPushIDFarAboveTheLastOneIsRefusedAndChangesNothing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try SQLiteStorage(directory: directory.url)
        try await storage.createDocument(Self.document(id: "d", pdf: Self.pdf), pdf: Self.pdf, baseRecords: [])
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

    @Test func aDocumentIsCreatedWithItsInitialContentInOneTransaction() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try SQLiteStorage(directory: directory.url)
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
}
