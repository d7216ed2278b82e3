import Foundation
import InstantJSON
import InstantPDF

/// One layer of one document on this device: its download, local data, documents and sync.
///
/// Get descriptors from ``InstantClient/documentDescriptor(forJWT:)``; the client returns the same
/// instance for the same document and layer. Every method may be called from any thread.
public final class InstantDocumentDescriptor: @unchecked Sendable {
    /// The document's identifier (`document_id`).
    public let identifier: String
    /// The layer's name; `""` is the default layer.
    public let layerName: String

    let store: LocalStore
    let transport: any InstantTransport
    weak var client: InstantClient?

    let lock = NSLock()
    var machine = DocumentStateMachine()
    /// Performs the machine's actions one at a time, in its order.
    let actions = SerialActionExecutor<DocumentAction>()
    /// The layer's token, in memory only: authentication is never stored, so after a launch the
    /// first sync asks the app for a token (``InstantClientDelegate``, `.instantDidFailAuthentication`).
    var jwt: String?
    var _userID: String?
    /// The pages of the document's PDF, once read (a document's PDF never changes).
    var _pages: [InstantPDFPage]?
    var _downloadProgress: Progress?
    var _migrationProgress: Progress?
    var downloadGeneration = 0
    var requestGeneration = 0
    var downloadTask: Task<Void, Never>?
    var requestTask: Task<Void, Never>?
    var automaticSyncTask: Task<Void, Never>?
    var retryTask: Task<Void, Never>?
    var listenTask: Task<Void, Never>?
    var answerToApply: (answer: SyncAnswer, push: PendingPush?)?
    /// The open listening WebSocket, on which sync requests go while it is open.
    var listeningSocket: ListeningSocket?
    /// Change messages from the listening WebSocket not applied yet, in order.
    var announcedChanges: [(since: Int64, answer: SyncAnswer)] = []
    /// The newest revision the server announced (change messages, revisions, long-poll answers).
    var announcedRevision: Int64 = 0
    var _editableDocument: InstantDocument?
    var readOnlyDocuments: [WeakDocument] = []
    /// Posts notifications and delegate calls in order, off the main thread.
    let notificationQueue: DispatchQueue
    /// The streams of ``stateUpdates``: fed under `lock`, in the order of the machine's states.
    let stateBroadcast = Broadcast<InstantDocumentState>()
    /// The streams of ``events``: fed on `notificationQueue`, in the order of the notifications.
    let eventBroadcast = Broadcast<InstantDescriptorEvent>()

    /// What ``actions`` runs: the machine's actions, and the end of the event sequences once the
    /// descriptor became invalid (after the events the invalidation posted).
    enum DocumentAction: Sendable {
        case perform(DocumentStateMachine.Action)
        case finishEvents
    }

    struct WeakDocument {
        weak var document: InstantDocument?
    }

    init(client: InstantClient, documentID: String, layerName: String) {
        self.client = client
        self.store = client.store
        self.transport = client.transport
        self.identifier = documentID
        self.layerName = layerName
        self.notificationQueue = DispatchQueue(label: "instant.descriptor.\(documentID).\(layerName)")
    }

    // MARK: State

    /// Where the layer is in its lifecycle and sync cycle.
    ///
    /// A layer downloaded in an earlier launch is ``InstantDocumentState/unknown`` until a
    /// document is first obtained from the descriptor (``editableDocument``,
    /// ``readOnlyDocument()``) or its local data is otherwise used (``sync()``,
    /// ``startListeningForServerChanges()``, the group methods); then its local data is opened and
    /// the state determined: `clean`, `dirty` (unsynced changes), a migration state, or `invalid`
    /// (damaged data).
    public var documentState: InstantDocumentState { lock.withLock { machine.state } }

    /// Whether the PDF and the layer's records are in the local store (also while the state is
    /// still `unknown` because no document was obtained yet).
    public var isDownloaded: Bool { lock.withLock { machine.isDownloaded } }

    /// The user the layer's data belongs to (`user_id` of the JWTs), if known. It may change once,
    /// from `nil` to a value, through ``reauthenticate(withJWT:)``.
    public var userID: String? { lock.withLock { _userID } }

    /// The running download's progress; cancel it to cancel the download. `nil` when no download runs.
    public var downloadProgress: Progress? { lock.withLock { _downloadProgress } }

    var isDownloading: Bool { lock.withLock { machine.isDownloading } }

    /// How long after the last local edit changes are synced automatically (1 s by default);
    /// ``Foundation/TimeInterval/instantSyncingLocalChangesDisabled`` turns that off.
    ///
    /// Zero, negative and NaN values are not supported and leave the delay as it is; use
    /// ``setDelayForSyncingLocalChanges(_:)`` to be told.
    public var delayForSyncingLocalChanges: TimeInterval {
        get { lock.withLock { machine.automaticSyncDelay.timeInterval } }
        set { try? setDelayForSyncingLocalChanges(newValue) }
    }

    /// Sets ``delayForSyncingLocalChanges``.
    /// - Throws: ``InstantError/Code/invalidSyncDelay`` for zero, negative or NaN values.
    public func setDelayForSyncingLocalChanges(_ delay: TimeInterval) throws {
        let value = try AutomaticSyncDelay(timeInterval: delay)
        try handle(.delayChanged(value))
    }

    /// Feeds the state machine and performs what it returns, through ``actions`` (in the machine's
    /// order, whichever threads deliver events).
    /// - Throws: the refusal of the machine, if it refused the event.
    func handle(_ event: DocumentStateMachine.Event) throws(InstantError) {
        let (refusal, ticket) = lock.withLock { () -> (InstantError?, UInt64?) in
            let before = machine.state
            let returned = machine.handle(event)
            let after = machine.state
            if after != before {
                // Under the lock, so that the streams see the states in the machine's order.
                stateBroadcast.yield(after)
                if after == .invalid { stateBroadcast.finish() }
            }
            var refusal: InstantError?
            var work: [DocumentAction] = []
            for action in returned {
                if case .refuse(let error) = action { refusal = error } else { work.append(.perform(action)) }
            }
            if after == .invalid, before != .invalid {
                // After the events this invalidation posted.
                work.append(.finishEvents)
            }
            // Under the lock, so that the queue's order is the machine's.
            return (refusal, work.isEmpty ? nil : actions.enqueue(work))
        }
        if let ticket { actions.run(through: ticket, run) }
        if let refusal { throw refusal }
    }

    /// Runs one entry of ``actions``.
    private func run(_ work: DocumentAction) {
        switch work {
        case .perform(let action): perform(action)
        case .finishEvents: notificationQueue.async { [eventBroadcast] in eventBroadcast.finish() }
        }
    }

    /// Feeds an event whose refusal nobody can report (timers, outcomes of operations).
    func deliver(_ event: DocumentStateMachine.Event) {
        try? handle(event)
    }

    // MARK: Download

    /// Starts downloading the PDF (once for all layers of the document) and the layer's records.
    /// Calling it again while the download runs does nothing more.
    /// - Throws: ``InstantError/Code/invalidJWT`` for a token of another document or layer,
    ///   ``InstantError/Code/userIDMismatch`` for a token of another user than the data's,
    ///   ``InstantError/Code/alreadyDownloaded`` when the layer is downloaded.
    public func download(usingJWT jwt: String) throws {
        let claims = try checkedClaims(jwt)
        let alreadyRunning = lock.withLock { machine.isDownloading }
        if alreadyRunning { return }
        lock.withLock {
            self.jwt = jwt
            if _userID == nil { _userID = claims.userID }
        }
        try handle(.downloadRequested)
    }

    /// The claims of a token for this descriptor's document, layer and user.
    func checkedClaims(_ jwt: String) throws(InstantError) -> InstantJWT {
        guard let claims = InstantJWT(jwt) else {
            throw InstantError.invalidJWT("The text is not a JWT with a 'document_id' claim.")
        }
        guard claims.documentID == identifier, claims.layerName == layerName else {
            throw InstantError.invalidJWT(
                "The JWT is for layer '\(claims.layerName)' of '\(claims.documentID)', not layer '\(layerName)' of '\(identifier)'."
            )
        }
        let current = lock.withLock { _userID }
        if let current, claims.userID != current {
            throw InstantError.userIDMismatch(expected: current, found: claims.userID)
        }
        return claims
    }

    // MARK: Documents

    /// The one editable document of this layer (the same instance every time, until it becomes
    /// invalid; then a new one). It can be had before the download finishes; reading and editing
    /// fail until it has.
    public var editableDocument: InstantDocument {
        requestLocalData()
        return lock.withLock {
            if let existing = _editableDocument, existing.isValid { return existing }
            let document = InstantDocument(descriptor: self, isEditable: true)
            _editableDocument = document
            return document
        }
    }

    /// A new read-only document of this layer; it shows changes as they arrive and refuses edits.
    public func readOnlyDocument() -> InstantDocument {
        requestLocalData()
        let document = InstantDocument(descriptor: self, isEditable: false)
        lock.withLock {
            readOnlyDocuments.removeAll { $0.document == nil }
            readOnlyDocuments.append(WeakDocument(document: document))
        }
        return document
    }

    /// The stable identifier of an annotation of one of this descriptor's documents: URL-, XML-
    /// and file-name-safe.
    /// - Throws: ``InstantError/Code/annotationNotFound`` if the annotation is not in the layer
    ///   (never added, or of another document).
    public func identifier(for annotation: Annotation) throws -> String {
        guard let id = annotation.id,
            try store.record(documentID: identifier, layer: layerName, id: id)?.kind == Annotation.kind
        else {
            throw InstantError(
                .annotationNotFound,
                "The annotation is not in layer '\(layerName)' of '\(identifier)'; add it to the editable document first."
            )
        }
        return id
    }

    /// The annotation with an identifier from ``identifier(for:)``, as `document` shows it.
    /// - Throws: ``InstantError/Code/annotationNotFound`` if the layer has no such annotation;
    ///   ``InstantError/Code/documentInvalidated`` if `document` is not one of this descriptor's.
    public func annotation(withIdentifier identifier: String, for document: InstantDocument) throws -> Annotation {
        guard documents.contains(where: { $0 === document }) else {
            throw InstantError(
                .documentInvalidated, "The document is not one of this descriptor's (or is no longer valid).")
        }
        guard let annotation = try document.annotation(withIdentifier: identifier) else {
            throw InstantError(.annotationNotFound, "No annotation of this layer has the identifier '\(identifier)'.")
        }
        return annotation
    }

    /// Every live document of this descriptor.
    var documents: [InstantDocument] {
        lock.withLock { ([_editableDocument] + readOnlyDocuments.map(\.document)).compactMap { $0 } }
    }

    // MARK: Sync

    /// Runs one sync cycle now (nothing if the layer is not downloaded).
    public func sync() {
        requestLocalData()
        deliver(.syncRequested(.manual))
    }

    /// Stops the running sync cycle: at once (cancelling its request) or after its request.
    public func stopSyncing(cancelCurrentRequest: Bool) {
        deliver(.stopSyncing(cancelCurrentRequest: cancelCurrentRequest))
    }

    /// Listens for changes on the server; each announced change starts a sync cycle.
    public func startListeningForServerChanges() {
        requestLocalData()
        deliver(.startListening)
    }

    /// Stops listening for changes on the server.
    public func stopListeningForServerChanges() {
        deliver(.stopListening)
    }

    /// Gives the descriptor a new JWT after the server refused the old one (or before it
    /// expires). The outcome is announced by notifications and the delegate; a success starts a
    /// sync cycle.
    /// - Throws: ``InstantError/Code/invalidJWT`` or ``InstantError/Code/userIDMismatch`` at once.
    public func reauthenticate(withJWT jwt: String) throws {
        let claims = try checkedClaims(jwt)
        let documentID = identifier
        let layer = layerName
        Task {
            do {
                let revision = try store.revision(documentID: documentID, layer: layer)
                let body = SyncRequestBody(clientID: store.clientID, baseRevision: revision)
                _ = try await transport.sync(documentID: documentID, layer: layer, jwt: jwt, body: body.json)
                lock.withLock {
                    self.jwt = jwt
                    if _userID == nil { _userID = claims.userID }
                }
                if try store.layer(documentID: documentID, name: layer) != nil {
                    try store.updateClaims(
                        documentID: documentID, layer: layer, userID: userID,
                        defaultGroup: claims.defaultGroup)
                }
                deliver(.reauthenticationSucceeded)
            } catch let error as InstantError {
                deliver(.reauthenticationFailed(error))
            } catch {
                deliver(.reauthenticationFailed(InstantError(.storageFailed, "\(error)")))
            }
        }
    }

    // MARK: Groups

    /// The group of new records: the override if one is set, else the `default_group` of the
    /// last JWT the server accepted.
    /// - Throws: ``InstantError/Code/notDownloaded`` before the download or after invalidation.
    public func defaultGroup() throws -> String? {
        let layer = try downloadedLayer()
        if case .assigned(let group) = layer.groupOverride { return group }
        return layer.defaultGroup
    }

    /// Makes new records go to `group` instead of the JWT's `default_group`; `nil` puts them in no
    /// group. The override lasts until ``resetDefaultGroup()``.
    public func overrideDefaultGroup(_ group: String?) throws {
        _ = try downloadedLayer()
        try store.setGroupOverride(.assigned(group), documentID: identifier, layer: layerName)
    }

    /// Goes back to the JWT's `default_group` for new records.
    /// - Returns: The group now in effect (`nil` is a valid group: none).
    @discardableResult
    public func resetDefaultGroup() throws -> String? {
        let layer = try downloadedLayer()
        try store.setGroupOverride(.unchanged, documentID: identifier, layer: layerName)
        return layer.defaultGroup
    }

    /// The number of pages of the downloaded PDF, or `nil` if it cannot be read.
    var pageCount: Int? { try? pdfPages().count }

    /// The pages of the downloaded PDF, read once.
    /// - Throws: ``InstantError/Code/corruptedData`` if the PDF cannot be read.
    func pdfPages() throws(InstantError) -> [InstantPDFPage] {
        if let known = lock.withLock({ _pages }) { return known }
        let url = store.pdfURL(documentID: identifier)
        let pages: [InstantPDFPage]
        do {
            pages = try PDFDocument(contentsOf: url).pages.map(InstantPDFPage.init)
        } catch {
            throw InstantError(
                .corruptedData,
                "The PDF of '\(identifier)' at \(url.path) cannot be read (\(error)); remove the document's local "
                    + "storage (InstantClient.removeLocalStorage(forDocumentIdentifier:)) and download it again.")
        }
        lock.withLock { _pages = pages }
        return pages
    }

    func downloadedLayer() throws(InstantError) -> LocalLayer {
        requestLocalData()
        let state = documentState
        if state == .invalid {
            throw InstantError(
                .documentInvalidated,
                "The descriptor of layer '\(layerName)' of '\(identifier)' is invalid (its client was released, "
                    + "or its local data was removed or found damaged); call removeLocalStorage() and download again.")
        }
        guard state.isOperational || state.isSyncing,
            let layer = try store.layer(documentID: identifier, name: layerName)
        else {
            throw InstantError(
                .notDownloaded, "The layer '\(layerName)' of '\(identifier)' is not downloaded (or was removed).")
        }
        return layer
    }

    // MARK: Removal

    /// Removes this layer's local data (the PDF stays for other layers), cancels its network
    /// activity and returns the descriptor to ``InstantDocumentState/unknown``. Needed before
    /// using a JWT of another user.
    public func removeLocalStorage() throws {
        try store.removeLayer(documentID: identifier, name: layerName)
        lock.withLock { _userID = nil }
        try handle(.localStorageRemoved)
    }

    /// Makes the descriptor unusable (its local data was removed by the client).
    func invalidate() {
        deliver(.invalidated)
    }

    /// Tells a new descriptor that its layer is in the store (downloaded in an earlier launch);
    /// the data is opened when it is first asked for (``requestLocalData()``).
    func foundLocalData(_ layer: LocalLayer) {
        lock.withLock { _userID = layer.userID }
        deliver(.localDataFound)
    }

    /// Opens the local data found at creation if that has not happened yet, which determines the
    /// state.
    func requestLocalData() {
        deliver(.localDataRequested)
    }

    /// Opens the layer's local data and reports what it holds to the machine.
    func openLocalData() {
        guard let layer = try? store.layer(documentID: identifier, name: layerName) else {
            // Removed meanwhile (by another client on the same directory): as if never downloaded.
            deliver(.localStorageRemoved)
            return
        }
        if (try? store.isIntact(documentID: identifier, layer: layerName)) != true {
            // Recoverable by removeLocalStorage() and a new download.
            deliver(.corruptionDetected)
        } else if layer.needsRefetch {
            deliver(.migrationNeeded(.databaseReset))
        } else if layer.contentVersion < LocalStore.contentVersion {
            deliver(.migrationNeeded(.content))
        } else {
            let pending = (try? store.hasPendingChanges(documentID: identifier, layer: layerName)) ?? false
            deliver(.localDataOpened(hasLocalChanges: pending))
        }
    }

    // MARK: Migration

    /// The progress of the content migration running or last run, if any.
    public var migrationProgress: Progress? { lock.withLock { _migrationProgress } }

    /// Rewrites local data written by an older version of the SDK (state
    /// ``InstantDocumentState/needsContentMigration``); the state is
    /// ``InstantDocumentState/migratingContent`` meanwhile.
    /// - Returns: The migration's progress.
    /// - Throws: ``InstantError/Code/performingContentMigration`` if one is running,
    ///   ``InstantError/Code/migrationNotNeeded`` if the data is current.
    public func attemptContentMigration() throws -> Progress {
        requestLocalData()
        let progress = Progress(totalUnitCount: -1)
        let previous = lock.withLock {
            defer { _migrationProgress = progress }
            return _migrationProgress
        }
        do {
            try handle(.migrationStarted(.content))
        } catch {
            lock.withLock { _migrationProgress = previous }
            throw error
        }
        return progress
    }
}
