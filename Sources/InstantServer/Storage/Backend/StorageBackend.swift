import Foundation
import ServiceLifecycle

/// A database that ``InstantStorage`` keeps its documents, layers, records and revocations in.
///
/// A backend supplies only its own SQL behind the primitives of ``StorageTransaction``; the rules
/// of the domain (exactly-once pushes, conditions, delete-wins, tombstones, revisions, the thread
/// cascade, how a layer starts) live once, in ``InstantStorage``. ``SQLiteBackend`` is the embedded
/// default; ``PostgresBackend`` lets several server nodes share one database.
///
/// A transaction's `body` must not start another transaction of the same backend: SQLite has a
/// single writer, and a pool of connections can run out.
public protocol StorageBackend: Sendable {
    /// Runs `body` in one write transaction: it commits when `body` returns and rolls back when it
    /// throws. Errors of the database come out as ``StorageError`` with
    /// ``StorageError/Code/backendFailure``.
    func write<T: Sendable>(_ body: @escaping @Sendable (any StorageTransaction) async throws -> T) async throws -> T

    /// Runs `body` in one read-only transaction: every primitive it calls sees the same snapshot.
    func read<T: Sendable>(_ body: @escaping @Sendable (any StorageTransaction) async throws -> T) async throws -> T

    /// Runs `body`, which calls exactly one primitive that its backend answers with one statement
    /// (one statement sees one snapshot by itself), where a backend may save the transaction: on
    /// PostgreSQL, `BEGIN` and `COMMIT` are two round trips of the three. The default is ``read(_:)``.
    func readStatement<T: Sendable>(_ body: @escaping @Sendable (any StorageTransaction) async throws -> T)
        async throws -> T

    /// Runs `body`, a group of commits that does not lock its layer, on one connection outside any
    /// transaction, where each statement commits on its own; `nil`, without calling `body`, when
    /// the backend has no such groups (the default: a group then locks its layer in ``write(_:)``).
    ///
    /// Such a group reads everything it needs in one statement
    /// (``OptimisticTransaction/readGroup(documentID:layer:ids:clients:changedAfter:)``) and writes
    /// everything in one statement that applies only if no other writer changed the layer since
    /// (``OptimisticTransaction/finishCommits(documentID:layer:writing:revision:pushes:announcing:ifUnchangedSince:assumingAbsent:)``):
    /// two round trips, and no lock held between them, where a locked group holds the layer's lock
    /// for four; only the write when the node's memory of the layer has what the read would find
    /// (``LayerMemory``). A backend whose transactions cost a round trip per statement offers it.
    func optimistically<T: Sendable>(_ body: @escaping @Sendable (any OptimisticTransaction) async throws -> T)
        async throws -> T?

    /// The executor the tasks of a layer's group commits prefer, or `nil` for the event loop of the
    /// commit that starts the group (the default). A backend whose statements are answered on an
    /// event loop of its own names that loop's executor, so that a group goes on where its
    /// statements' answers arrive; SQLite names a loop of its own, so that the next group's start
    /// does not wait behind the server's HTTP work.
    var commitExecutor: (any TaskExecutor)? { get }

    /// Throws ``StorageError/Code/backendFailure`` unless the database answers a trivial query now.
    func checkHealth() async throws

    /// A human-readable description for logs and the healthcheck, without credentials.
    var description: String { get }

    /// Readies the database before the server serves (migrates its schema); called once, with
    /// ``services`` running.
    func prepare() async throws

    /// What must run while the backend is in use (a pool of connections), started before the
    /// server and stopped after it.
    var services: [any Service] { get }

    /// The channel to the other server nodes that share this database, or `nil` for a database of
    /// one node.
    var nodeChannel: (any NodeChannel)? { get }
}

/// A record row as a backend stores it: the record plus the thread root that indexes a live
/// comment (``InstantStorage`` computes it; the backend only stores and queries it).
public struct RecordRow: Sendable, Hashable {
    /// The record.
    public var record: StoredRecord
    /// The `rootId` of a live comment, `nil` for everything else.
    public var threadRoot: String?

    /// Creates a row.
    public init(record: StoredRecord, threadRoot: String?) {
        self.record = record
        self.threadRoot = threadRoot
    }
}

/// What a group transaction reads once its layer is locked
/// (``StorageTransaction/groupReads(documentID:layer:ids:clients:changedAfter:)``).
public struct GroupReads: Sendable {
    /// The records with the ids asked (tombstones included), in no particular order.
    public var records: [StoredRecord]
    /// The last push ids of the clients asked (clients without one are absent).
    public var lastPushIDs: [ClientIdentity: Int64]
    /// The records (tombstones included) changed after the revision asked, by revision then id;
    /// empty when none was asked.
    public var changed: [StoredRecord]

    /// Creates what a group read.
    public init(records: [StoredRecord], lastPushIDs: [ClientIdentity: Int64], changed: [StoredRecord]) {
        self.records = records
        self.lastPushIDs = lastPushIDs
        self.changed = changed
    }
}

/// A layer locked for a group of commits (``StorageTransaction/lockLayer(documentID:name:)``).
public struct LockedLayer: Sendable {
    /// The layer as it was read.
    public var layer: StoredLayer
    /// The document's page count.
    public var pageCount: Int
    /// Which version of the layer's row was read, `nil` when the backend keeps none: a group
    /// transaction that writes the layer gives its row a new version
    /// (``StorageTransaction/finishCommits(documentID:layer:writing:revision:pushes:announcing:)``;
    /// a random 64-bit number on SQLite, the writing transaction's id on PostgreSQL), and a layer
    /// created again has a row of its own, so a node whose last group on the layer wrote the version
    /// read knows the layer is as that group left it. Its form is the backend's.
    public var version: String?

    /// Creates a locked layer.
    public init(layer: StoredLayer, pageCount: Int, version: String?) {
        self.layer = layer
        self.pageCount = pageCount
        self.version = version
    }
}

/// What a group of commits that does not lock its layer reads first, in one statement
/// (``OptimisticTransaction/readGroup(documentID:layer:ids:clients:changedAfter:)``).
public struct LayerSnapshot: Sendable {
    /// The layer as it was read.
    public var layer: StoredLayer
    /// The document's page count.
    public var pageCount: Int
    /// Which version of the layer's row was read, for
    /// ``OptimisticTransaction/finishCommits(documentID:layer:writing:revision:pushes:announcing:ifUnchangedSince:assumingAbsent:)``:
    /// every writer of the layer's records or revision writes the row, which gives it another
    /// version, and so does deleting the layer and creating it again. Its form is the backend's.
    public var version: String
    /// The records, push ids and changes asked for, read with the layer.
    public var reads: GroupReads

    /// Creates what a group read.
    public init(layer: StoredLayer, pageCount: Int, version: String, reads: GroupReads) {
        self.layer = layer
        self.pageCount = pageCount
        self.version = version
        self.reads = reads
    }

    /// The layer as read, in the form a locked group finds it in.
    public var asLocked: LockedLayer { LockedLayer(layer: layer, pageCount: pageCount, version: version) }
}

/// A client's last push applied on a layer, as a backend stores it for exactly-once pushes.
public struct StoredPush: Sendable, Hashable {
    /// The client, within its user.
    public var client: ClientIdentity
    /// The push id.
    public var pushID: Int64
    /// The layer's revision after the push.
    public var revision: Int64

    /// Creates the state of a push.
    public init(client: ClientIdentity, pushID: Int64, revision: Int64) {
        self.client = client
        self.pushID = pushID
        self.revision = revision
    }
}

/// The primitives of one transaction of a ``StorageBackend``: plain reads and writes of rows,
/// without decisions. Layer and document identity is always given in full; a primitive never
/// creates what it was not asked to create.
public protocol StorageTransaction: Sendable {
    // MARK: Documents

    /// The document row, or `nil`.
    func document(id: String) async throws -> StoredDocument?

    /// A page of the documents matching the query, and how many match in total.
    func documents(_ query: DocumentQuery) async throws -> DocumentListing

    /// Inserts a document row. Returns `false` (and writes nothing) if the id is taken.
    func insertDocument(_ document: StoredDocument) async throws -> Bool

    /// Deletes the document row with everything that belongs to it (base records, layers,
    /// records, push state, attachments). Returns whether it existed.
    func deleteDocument(id: String) async throws -> Bool

    /// Whether any document's PDF has this SHA-256.
    func isPDFReferenced(sha256: String) async throws -> Bool

    /// Holds, until the transaction ends, a lock that every other transaction taking the same
    /// content key waits for; used to keep storing and removing a shared PDF from racing. A
    /// backend with a single writer may do nothing.
    func lockContent(sha256: String) async throws

    /// Stores the document's base records (revision 0, no users).
    func insertBaseRecords(documentID: String, _ records: [RecordWrite]) async throws

    /// The document's base records, ordered by id.
    func baseRecords(documentID: String) async throws -> [StoredRecord]

    // MARK: Layers

    /// The layers of a document, ordered by name.
    func layers(documentID: String) async throws -> [StoredLayer]

    /// The layer, or `nil`. With `forUpdate`, the layer row stays locked until the transaction ends,
    /// so that commits to one layer follow each other even across server nodes.
    func layer(documentID: String, name: String, forUpdate: Bool) async throws -> StoredLayer?

    /// Locks the layer for a group of commits, as ``layer(documentID:name:forUpdate:)`` with
    /// `forUpdate`, and reads the document's page count and the version of the layer's row with it;
    /// `nil` when the layer (or the document) is missing. The default reads the layer and the
    /// document one after the other, locks nothing else (enough for a backend whose write
    /// transactions exclude each other) and reads no version.
    func lockLayer(documentID: String, name: String) async throws -> LockedLayer?

    /// The document's page count (`nil` without the document) and its layer of that name (`nil`
    /// when missing), read together: what a client request looks up first. The default reads the
    /// document and the layer one after the other.
    func pageCountAndLayer(documentID: String, name: String) async throws -> (pageCount: Int?, layer: StoredLayer?)

    /// Inserts a layer row with the given revision. Returns `false` (and writes nothing) if the
    /// document already has a layer of that name.
    func insertLayer(documentID: String, name: String, revision: Int64) async throws -> Bool

    /// Sets the revision of a layer.
    func setRevision(documentID: String, layer: String, to revision: Int64) async throws

    /// Deletes a layer with its records and push state. Returns whether it existed.
    func deleteLayer(documentID: String, name: String) async throws -> Bool

    // MARK: Records

    /// The live records of a layer, ordered by id: of one kind when `kind` is given, those whose
    /// Instant JSON `pageIndex` is `pageIndex` when it is given, skipping the first `offset`, at
    /// most `limit` (all when `nil`). The database filters and pages them: the layer's other
    /// records are not read.
    func liveRecords(
        documentID: String, layer: String, kind: RecordKind?, onPage pageIndex: Int?, offset: Int, limit: Int?
    ) async throws -> [StoredRecord]

    /// The records with the given ids (tombstones included), in no particular order.
    func records(documentID: String, layer: String, ids: [String]) async throws -> [StoredRecord]

    /// The live comments whose thread root is one of the given ids, ordered by id.
    func comments(documentID: String, layer: String, threadRoots: [String]) async throws -> [StoredRecord]

    /// The records (tombstones included) with a revision above the given one, by revision then id.
    func records(documentID: String, layer: String, changedAfter revision: Int64) async throws -> [StoredRecord]

    /// Inserts or replaces records of a layer.
    func upsert(_ rows: [RecordRow], documentID: String, layer: String) async throws

    /// Copies the live records of one layer into another (empty) layer of the same document, with
    /// the given revision and time, keeping everything else (thread roots included). Returns the
    /// number of records copied.
    func copyLiveRecords(documentID: String, from source: String, to target: String, revision: Int64, at time: Date)
        async throws -> Int

    // MARK: Exactly-once push state

    /// The last push id applied for a client on a layer, or `nil`.
    func lastPushID(documentID: String, layer: String, client: ClientIdentity) async throws -> Int64?

    /// Stores the last push id applied for a client on a layer, with the layer revision after it.
    func setLastPushID(_ pushID: Int64, documentID: String, layer: String, client: ClientIdentity, revision: Int64)
        async throws

    /// The last push ids applied for several clients on a layer (clients without one are absent).
    /// The default asks for each client in turn.
    func lastPushIDs(documentID: String, layer: String, clients: [ClientIdentity]) async throws
        -> [ClientIdentity: Int64]

    /// What a group transaction on a (locked) layer reads before its commits, together: the records
    /// with the given ids, the last push ids of the given clients, and the records changed after
    /// `changedAfter` (none when `nil`). The default reads them in turn
    /// (``records(documentID:layer:ids:)``, ``lastPushIDs(documentID:layer:clients:)``,
    /// ``records(documentID:layer:changedAfter:)``); a backend whose statements each cost a round
    /// trip reads them in one.
    func groupReads(
        documentID: String, layer: String, ids: [String], clients: [ClientIdentity], changedAfter: Int64?
    ) async throws -> GroupReads

    /// Ends the commits of a group transaction on a layer together: writes the rows (at most one
    /// per record id) as ``upsert(_:documentID:layer:)`` does, sets the layer's revision (unless
    /// `nil`), stores each client's last push id, and announces the events to the other nodes.
    /// Returns the version of the layer's row it wrote (``LockedLayer/version``), or `nil` when it
    /// wrote none (nothing to write, or a backend that keeps no versions). The default calls
    /// ``upsert(_:documentID:layer:)``, ``setRevision(documentID:layer:to:)``,
    /// ``setLastPushID(_:documentID:layer:client:revision:)`` and ``announce(_:)``, and keeps no
    /// versions.
    func finishCommits(
        documentID: String, layer: String, writing rows: [RecordRow], revision: Int64?, pushes: [StoredPush],
        announcing events: [StorageEvent]
    ) async throws -> String?

    // MARK: Attachments

    /// Stores an attachment of a document unless the document has one with that SHA-256.
    func insertAttachment(documentID: String, _ attachment: StoredAttachment) async throws

    /// The attachment of a document with the given SHA-256, or `nil`.
    func attachment(documentID: String, sha256: String) async throws -> StoredAttachment?

    /// The content type and size in bytes of an attachment, without its bytes, or `nil`.
    func attachmentInfo(documentID: String, sha256: String) async throws -> (contentType: String, byteSize: Int)?

    /// A range of an attachment's bytes (clamped to its size), or `nil` when it does not exist.
    func attachmentBytes(documentID: String, sha256: String, range: Range<Int>) async throws -> Data?

    /// The SHA-256 keys of the attachments the document has, of those asked for.
    func attachmentKeys(documentID: String, among keys: [String]) async throws -> Set<String>

    // MARK: Token revocation

    /// Records token ids as revoked at the given time (ids already revoked stay as they are).
    func revokeTokens(ids: [String], at time: Date) async throws

    /// Whether a token id was revoked.
    func isTokenRevoked(id: String) async throws -> Bool

    // MARK: Notifications

    /// Announces a change to the other server nodes when the transaction commits (nothing if it
    /// rolls back). A backend that serves one node may do nothing.
    func announce(_ event: StorageEvent) async throws
}

/// The primitives of a group of commits that does not lock its layer
/// (``StorageBackend/optimistically(_:)``). Every statement commits on its own: the group's reads
/// see what committed before each of them, and only the last statement writes.
public protocol OptimisticTransaction: StorageTransaction {
    /// In one statement: the layer (`nil` when it or its document is missing) with its document's
    /// page count and the version of its row, and what
    /// ``StorageTransaction/groupReads(documentID:layer:ids:clients:changedAfter:)`` reads.
    func readGroup(
        documentID: String, layer: String, ids: [String], clients: [ClientIdentity], changedAfter: Int64?
    ) async throws -> LayerSnapshot?

    /// In one statement, what
    /// ``StorageTransaction/finishCommits(documentID:layer:writing:revision:pushes:announcing:)``
    /// writes, if the layer's row still has the version `version` and the layer has no record
    /// (not even a tombstone) with an id of `absent`; a push id never replaces a higher one of its
    /// client. `wrote` is `false`, having written nothing, when another writer changed the layer
    /// since (or deleted it), when a record of `absent` exists, or when the rows are more than one
    /// statement carries; `true` when it wrote, or when there was nothing to write (then it checked
    /// nothing: a caller that relies on the checks must have something to write). `written` is the
    /// version of the layer's row it wrote, as
    /// ``StorageTransaction/finishCommits(documentID:layer:writing:revision:pushes:announcing:)``
    /// returns it.
    func finishCommits(
        documentID: String, layer: String, writing rows: [RecordRow], revision: Int64?, pushes: [StoredPush],
        announcing events: [StorageEvent], ifUnchangedSince version: String, assumingAbsent absent: [String]
    ) async throws -> (wrote: Bool, written: String?)
}

extension StorageBackend {
    public var commitExecutor: (any TaskExecutor)? { nil }

    public func optimistically<T: Sendable>(
        _ body: @escaping @Sendable (any OptimisticTransaction) async throws -> T
    ) async throws -> T? {
        nil
    }

    public func readStatement<T: Sendable>(
        _ body: @escaping @Sendable (any StorageTransaction) async throws -> T
    ) async throws -> T {
        try await read(body)
    }
}

extension StorageTransaction {
    /// Every live record of a layer, of one kind when `kind` is given, ordered by id.
    public func liveRecords(documentID: String, layer: String, kind: RecordKind?) async throws -> [StoredRecord] {
        try await liveRecords(documentID: documentID, layer: layer, kind: kind, onPage: nil, offset: 0, limit: nil)
    }

    public func lastPushIDs(documentID: String, layer: String, clients: [ClientIdentity]) async throws
        -> [ClientIdentity: Int64]
    {
        var found: [ClientIdentity: Int64] = [:]
        for client in clients {
            found[client] = try await lastPushID(documentID: documentID, layer: layer, client: client)
        }
        return found
    }

    public func groupReads(
        documentID: String, layer: String, ids: [String], clients: [ClientIdentity], changedAfter: Int64?
    ) async throws -> GroupReads {
        var changed: [StoredRecord] = []
        if let changedAfter {
            changed = try await records(documentID: documentID, layer: layer, changedAfter: changedAfter)
        }
        return GroupReads(
            records: try await records(documentID: documentID, layer: layer, ids: ids),
            lastPushIDs: try await lastPushIDs(documentID: documentID, layer: layer, clients: clients),
            changed: changed)
    }

    public func finishCommits(
        documentID: String, layer: String, writing rows: [RecordRow], revision: Int64?, pushes: [StoredPush],
        announcing events: [StorageEvent]
    ) async throws -> String? {
        if !rows.isEmpty { try await upsert(rows, documentID: documentID, layer: layer) }
        if let revision { try await setRevision(documentID: documentID, layer: layer, to: revision) }
        for push in pushes {
            try await setLastPushID(
                push.pushID, documentID: documentID, layer: layer, client: push.client, revision: push.revision)
        }
        for event in events { try await announce(event) }
        return nil
    }

    public func lockLayer(documentID: String, name: String) async throws -> LockedLayer? {
        guard let layer = try await layer(documentID: documentID, name: name, forUpdate: true),
            let document = try await document(id: documentID)
        else { return nil }
        return LockedLayer(layer: layer, pageCount: document.pageCount, version: nil)
    }

    public func pageCountAndLayer(documentID: String, name: String) async throws
        -> (pageCount: Int?, layer: StoredLayer?)
    {
        guard let document = try await document(id: documentID) else { return (nil, nil) }
        return (document.pageCount, try await layer(documentID: documentID, name: name, forUpdate: false))
    }
}
