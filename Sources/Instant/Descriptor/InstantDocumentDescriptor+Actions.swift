import Foundation
import InstantJSON

extension InstantDocumentDescriptor {
    /// Performs one action of the state machine.
    func perform(_ action: DocumentStateMachine.Action) {
        switch action {
        case .openLocalData: openLocalData()
        case .startDownload: startDownload()
        case .cancelDownload:
            replaceTask(\.downloadTask, with: nil) {
                downloadGeneration += 1
                _downloadProgress = nil
            }
        case .sendChanges: startRequest(.send)
        case .fetchChanges: startRequest(.fetch)
        case .fetchAnnouncedChanges: startRequest(.fetchAnnounced)
        case .applyResponse: applyResponse()
        case .cancelRequest:
            replaceTask(\.requestTask, with: nil) { requestGeneration += 1 }
        case .scheduleAutomaticSync(let delay):
            replaceTask(\.automaticSyncTask, with: timer(after: delay, .syncRequested(.localChangesDelayElapsed)))
        case .cancelAutomaticSync:
            replaceTask(\.automaticSyncTask, with: nil)
        case .scheduleRetry(let delay):
            replaceTask(\.retryTask, with: timer(after: delay, .syncRequested(.retryDelayElapsed)))
        case .cancelRetry:
            replaceTask(\.retryTask, with: nil)
        case .startListening: startListening()
        case .stopListening:
            replaceTask(\.listenTask, with: nil) { listeningSocket = nil }
        case .performMigration(.content): migrateContent()
        case .performMigration(.databaseReset): resetForDatabaseMigration()
        case .invalidateDocuments:
            for document in documents { document.invalidate() }
        case .post(let notification): post(notification)
        case .refuse: break
        }
    }

    /// Puts `task` in the slot at `slot` (with `update`, under the same lock) and cancels the task
    /// it held after letting go of the lock: cancelling runs the task's cancellation handlers at
    /// once, on this thread.
    func replaceTask(
        _ slot: ReferenceWritableKeyPath<InstantDocumentDescriptor, Task<Void, Never>?>, with task: Task<Void, Never>?,
        update: () -> Void = {}
    ) {
        let replaced = lock.withLock {
            update()
            defer { self[keyPath: slot] = task }
            return self[keyPath: slot]
        }
        replaced?.cancel()
    }

    private func timer(after delay: Duration, _ event: DocumentStateMachine.Event) -> Task<Void, Never> {
        Task { [weak self] in
            guard (try? await Task.sleep(for: delay)) != nil else { return }
            self?.deliver(event)
        }
    }

    // MARK: Download

    private func startDownload() {
        let progress = Progress(totalUnitCount: -1)
        let (generation, jwt) = lock.withLock {
            downloadGeneration += 1
            _downloadProgress = progress
            return (downloadGeneration, self.jwt)
        }
        progress.cancellationHandler = { [weak self] in self?.deliver(.downloadCancelled) }
        let documentID = identifier
        let layer = layerName
        let task = Task { [weak self] in
            guard let self, let jwt, let claims = InstantJWT(jwt) else { return }
            let outcome: DocumentStateMachine.Event
            do {
                // The PDF (if this device does not have it yet) and the records come in parallel.
                async let records = transport.snapshot(documentID: documentID, layer: layer, jwt: jwt)
                if try !store.hasPDF(documentID: documentID) {
                    try await client?.downloadPDF(documentID: documentID, layer: layer, jwt: jwt) { received, total in
                        if let total { progress.totalUnitCount = total + 1 }
                        progress.completedUnitCount = received
                    }
                }
                let snapshot = try await records
                try Task.checkCancellation()
                try store.storeDownload(
                    documentID: documentID, layer: layer, userID: claims.userID,
                    defaultGroup: claims.defaultGroup, revision: snapshot.revision, records: snapshot.records)
                progress.totalUnitCount = max(progress.totalUnitCount, 1)
                progress.completedUnitCount = progress.totalUnitCount
                outcome = .downloadFinished
            } catch is CancellationError {
                outcome = .downloadCancelled
            } catch let error as InstantError {
                outcome = error.code == .cancelled ? .downloadCancelled : .downloadFailed(error)
            } catch {
                outcome = .downloadFailed(InstantError(.storageFailed, "\(error)"))
            }
            let current = lock.withLock {
                guard downloadGeneration == generation else { return false }
                _downloadProgress = nil
                downloadTask = nil
                return true
            }
            guard current else { return }
            deliver(outcome)
            if case .downloadFinished = outcome {
                for document in documents { document.notifyChanges(.reload) }
            }
        }
        lock.withLock { if downloadGeneration == generation { downloadTask = task } }
    }

    // MARK: Migrations

    private func migrateContent() {
        let progress = lock.withLock { _migrationProgress } ?? Progress(totalUnitCount: -1)
        let documentID = identifier
        let layer = layerName
        Task { [weak self] in
            guard let self else { return }
            do {
                let hasLocalChanges = try store.migrateContent(documentID: documentID, layer: layer) { done, total in
                    progress.totalUnitCount = Int64(total)
                    progress.completedUnitCount = Int64(done)
                }
                progress.totalUnitCount = max(progress.totalUnitCount, 1)
                progress.completedUnitCount = progress.totalUnitCount
                lock.withLock { _migrationProgress = nil }
                deliver(.migrationFinished(.content, hasLocalChanges: hasLocalChanges))
                for document in documents { document.notifyChanges(.reload) }
            } catch {
                lock.withLock { _migrationProgress = nil }
                deliver(.migrationFailed(.content, InstantError(.contentMigrationFailed, "\(error)")))
            }
        }
    }

    /// Pushes the layer's pending changes, then fetches all its records again.
    private func resetForDatabaseMigration() {
        let documentID = identifier
        let layer = layerName
        Task { [weak self] in
            guard let self else { return }
            do {
                guard let jwt = lock.withLock({ self.jwt }) else {
                    throw InstantError(.authenticationFailed, "No JWT for this layer; call reauthenticate(withJWT:).")
                }
                while let push = try store.nextPush(documentID: documentID, layer: layer) {
                    let body = SyncRequestBody(clientID: store.clientID, push: push)
                    let answer = try await transport.sync(
                        documentID: documentID, layer: layer, jwt: jwt, body: body.json)
                    _ = try store.apply(answer, push: push, documentID: documentID, layer: layer)
                }
                let snapshot = try await transport.snapshot(documentID: documentID, layer: layer, jwt: jwt)
                try store.replaceRecords(
                    documentID: documentID, layer: layer, revision: snapshot.revision, records: snapshot.records)
                deliver(.migrationFinished(.databaseReset, hasLocalChanges: false))
                for document in documents { document.notifyChanges(.reload) }
            } catch let error as InstantError {
                deliver(.migrationFailed(.databaseReset, error))
            } catch {
                deliver(.migrationFailed(.databaseReset, InstantError(.storageFailed, "\(error)")))
            }
        }
    }

    // MARK: Sync requests

    /// What a sync request is for.
    private enum Request {
        /// Sends the pending local changes (or fetches when there are none).
        case send
        /// Fetches the server's changes.
        case fetch
        /// Fetches what the server announced.
        case fetchAnnounced
    }

    private func startRequest(_ request: Request) {
        let (generation, jwt) = lock.withLock {
            requestGeneration += 1
            return (requestGeneration, self.jwt)
        }
        let documentID = identifier
        let layer = layerName
        let task = Task { [weak self] in
            guard let self else { return }
            let event: DocumentStateMachine.Event
            do {
                guard let jwt else {
                    throw InstantError(.authenticationFailed, "No JWT for this layer; call reauthenticate(withJWT:).")
                }
                if request == .send {
                    // Records may reference attachments made here: the server needs them first.
                    for attachment in try store.attachmentsToUpload(documentID: documentID) {
                        try await transport.uploadAttachment(
                            documentID: documentID, layer: layer, jwt: jwt, id: attachment.id, data: attachment.data,
                            contentType: attachment.contentType)
                        try store.markUploaded(documentID: documentID, id: attachment.id)
                    }
                }
                let push = request == .send ? try store.nextPush(documentID: documentID, layer: layer) : nil
                let baseRevision = try store.revision(documentID: documentID, layer: layer)
                let answer: SyncAnswer
                switch push == nil ? takeAnnouncedChanges(after: baseRevision) : .missing {
                case .changes(let announced):
                    // The listening WebSocket brought the changes: no request.
                    answer = announced
                case .nothingNew where request == .fetchAnnounced:
                    answer = SyncAnswer(revision: baseRevision, records: [])
                case .nothingNew, .missing:
                    let body =
                        push.map { SyncRequestBody(clientID: store.clientID, push: $0) }
                        ?? SyncRequestBody(clientID: store.clientID, baseRevision: baseRevision)
                    answer = try await sendSyncRequest(body.json, jwt: jwt)
                }
                lock.withLock { answerToApply = (answer, push) }
                event = .responseReceived
            } catch let error as InstantError {
                event = .requestFailed(error)
            } catch {
                event = .requestFailed(InstantError(.storageFailed, "\(error)"))
            }
            let current = lock.withLock {
                guard requestGeneration == generation else { return false }
                requestTask = nil
                return true
            }
            if current { deliver(event) }
        }
        lock.withLock { if requestGeneration == generation { requestTask = task } }
    }

    private func applyResponse() {
        guard
            let pending = lock.withLock({ () -> (answer: SyncAnswer, push: PendingPush?)? in
                defer { answerToApply = nil }
                return answerToApply
            })
        else { return }
        do {
            let result = try store.apply(
                pending.answer, push: pending.push, documentID: identifier, layer: layerName)
            for document in documents { document.notifyChanges(result.change) }
            deliver(.responseApplied(hasLocalChanges: result.hasLocalChanges))
        } catch {
            deliver(.corruptionDetected)
        }
    }

    // MARK: Notifications

    private func post(_ notification: InstantDescriptorEvent) {
        let jwt = lock.withLock { self.jwt }
        let userInfo = notification.userInfo(jwt: jwt)
        let client = self.client
        notificationQueue.async { [self] in
            NotificationCenter.default.post(name: notification.name, object: self, userInfo: userInfo)
            eventBroadcast.yield(notification)
            guard let client, let delegate = client.delegate else { return }
            switch notification {
            case .didBeginSyncing: delegate.instantClient(client, didBeginSyncFor: self)
            case .syncCycleDidChangeState(let state):
                delegate.instantClient(client, documentDescriptor: self, didChangeSyncStateTo: state)
            case .didFinishSyncing: delegate.instantClient(client, didFinishSyncFor: self)
            case .didFailSyncing(let error):
                delegate.instantClient(client, documentDescriptor: self, didFailSyncWithError: error)
            case .didFailAuthentication: delegate.instantClient(client, didFailAuthenticationFor: self)
            case .didFinishDownload: delegate.instantClient(client, didFinishDownloadFor: self)
            case .didFailDownload(let error):
                delegate.instantClient(client, documentDescriptor: self, didFailDownloadWithError: error)
            case .didFinishReauthentication:
                delegate.instantClient(client, documentDescriptor: self, didFinishReauthenticationWithJWT: jwt ?? "")
            case .didFailReauthentication(let error):
                delegate.instantClient(client, documentDescriptor: self, didFailReauthenticationWithError: error)
            case .didFailListening(let error):
                delegate.instantClient(client, documentDescriptor: self, didFailListeningWithError: error)
            case .didResumeListening: delegate.instantClient(client, didResumeListeningFor: self)
            }
        }
    }
}
