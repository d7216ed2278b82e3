/// The document descriptor's states and sync cycle, as a value that takes events and returns
/// the actions its owner (the descriptor's actor) must perform.
///
/// The machine does no I/O and reads no clock: timers are actions carrying durations, and the
/// jitter of retry delays comes from the injected random number generator. Feed it every
/// ``Event`` in the order they happen and perform the returned ``Action``s in order.
///
/// Rules beyond the documented transitions:
/// - A cycle that ends (finished, failed, cancelled, or interrupted by removal or invalidation)
///   posts exactly one of did finish syncing, did fail syncing, did fail authentication.
/// - Network failures (``InstantError/isRetryable``) keep the channel for server changes open
///   and schedule a retry; an authentication failure closes it until reauthentication succeeds;
///   any other failure closes it for good (`startListeningForServerChanges()` reopens it).
/// - A server poke during a cycle makes the cycle fetch once more before it ends.
/// - Local data downloaded in an earlier launch is opened, and the state determined, only when
///   a document is first obtained: until then the state is `unknown` (the seeds' rule).
/// - A listening connection that drops posts did fail listening once, however many reconnection
///   attempts fail after it, and did resume listening once it is back.
struct DocumentStateMachine: Sendable {
    /// Whether the layer has local data that is not opened yet.
    enum LocalData: Sendable, Hashable {
        /// None, or it is open (the state says which).
        case absent
        /// Downloaded in an earlier launch; opened when a document is first obtained.
        case found
        /// Being opened (``Action/openLocalData`` was returned).
        case opening
    }

    /// Where the running sync cycle is.
    enum CyclePhase: Sendable, Hashable {
        /// Local changes were sent (state `sendingChanges`).
        case awaitingPushResponse
        /// A fetch was sent (state `receivingChanges`).
        case awaitingFetchResponse
        /// The response is being applied (state `receivingChanges`).
        case applyingResponse
    }

    /// The running sync cycle.
    struct Cycle: Sendable, Hashable {
        var phase: CyclePhase
        /// `stopSyncing(false)` was called: end after the current request.
        var stopsAfterCurrentRequest = false
        /// The server announced a change during the cycle: fetch once more before ending.
        var serverChangedMeanwhile = false
    }

    /// The observable state.
    private(set) var state: InstantDocumentState
    /// Whether the local store holds changes the server has not confirmed.
    private(set) var hasLocalChanges = false
    /// Whether a download is running.
    private(set) var isDownloading = false
    /// Local data found at creation and not opened yet.
    private(set) var localData = LocalData.absent
    /// Whether the server refused the token; no sync is attempted until reauthentication.
    private(set) var awaitsReauthentication = false
    /// Whether the app wants server changes announced (acted on once the data is usable).
    private(set) var wantsServerChanges = false
    /// Whether the announcement channel is open.
    private(set) var isListening = false
    /// Whether the open channel lost its connection (and did fail listening was posted).
    private(set) var listeningConnectionLost = false
    /// `delayForSyncingLocalChanges`.
    private(set) var automaticSyncDelay: AutomaticSyncDelay
    /// Whether an automatic-sync timer is set.
    private(set) var automaticSyncScheduled = false
    /// Whether a retry timer is set.
    private(set) var retryScheduled = false
    /// Consecutive network failures since the last successful cycle.
    private(set) var consecutiveFailures = 0
    /// The running sync cycle, if any.
    private(set) var cycle: Cycle?
    /// The backoff rules for network failures.
    let retryPolicy: RetryPolicy
    /// The source of jitter.
    private var randomNumberGenerator: any RandomNumberGenerator & Sendable

    /// Creates a machine in `unknown`.
    /// - Parameters:
    ///   - automaticSyncDelay: The initial `delayForSyncingLocalChanges` (1 s by default).
    ///   - retryPolicy: The backoff rules for network failures.
    ///   - randomNumberGenerator: The source of the retry delays' jitter.
    init(
        automaticSyncDelay: AutomaticSyncDelay = .default,
        retryPolicy: RetryPolicy = .default,
        randomNumberGenerator: some RandomNumberGenerator & Sendable = SystemRandomNumberGenerator()
    ) {
        self.state = .unknown
        self.automaticSyncDelay = automaticSyncDelay
        self.retryPolicy = retryPolicy
        self.randomNumberGenerator = randomNumberGenerator
    }
}

extension DocumentStateMachine: Equatable {
    /// Two machines are equal when everything but their random number generators is.
    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.state == rhs.state && lhs.hasLocalChanges == rhs.hasLocalChanges
            && lhs.isDownloading == rhs.isDownloading && lhs.localData == rhs.localData
            && lhs.awaitsReauthentication == rhs.awaitsReauthentication
            && lhs.wantsServerChanges == rhs.wantsServerChanges && lhs.isListening == rhs.isListening
            && lhs.listeningConnectionLost == rhs.listeningConnectionLost
            && lhs.automaticSyncDelay == rhs.automaticSyncDelay
            && lhs.automaticSyncScheduled == rhs.automaticSyncScheduled && lhs.retryScheduled == rhs.retryScheduled
            && lhs.consecutiveFailures == rhs.consecutiveFailures && lhs.cycle == rhs.cycle
            && lhs.retryPolicy == rhs.retryPolicy
    }
}

extension DocumentStateMachine {
    /// Whether the layer's data is in the local store: downloaded (opened or not) and not
    /// invalid.
    var isDownloaded: Bool {
        (state != .unknown && state != .invalid) || localData != .absent
    }

    /// Draws the jitter fraction for the next retry delay.
    mutating func nextRandomFraction() -> Double {
        Double.random(in: 0..<1, using: &randomNumberGenerator)
    }
}

extension DocumentStateMachine {
    /// Applies an event and returns what the owner must do, in order.
    ///
    /// Events that make no sense in the current state (a late timer, an outcome of an operation
    /// that is no longer running) leave the machine unchanged and return no actions.
    mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .localDataFound:
            guard state == .unknown, !isDownloading, localData == .absent else { return [] }
            localData = .found
            return []
        case .localDataRequested:
            guard state == .unknown, localData == .found else { return [] }
            localData = .opening
            return [.openLocalData]
        case .localDataOpened(let hasLocalChanges):
            guard state == .unknown, !isDownloading else { return [] }
            localData = .absent
            return becomeOperational(hasLocalChanges: hasLocalChanges, openingChannelStartsCycle: true)
        case .migrationNeeded(let migration):
            return migrationNeeded(migration)
        case .migrationStarted(let migration):
            return migrationStarted(migration)
        case .migrationFinished(let migration, let hasLocalChanges):
            return migrationFinished(migration, hasLocalChanges: hasLocalChanges)
        case .migrationFailed(let migration, let error):
            return migrationFailed(migration, error)
        case .corruptionDetected:
            guard state != .invalid else { return [] }
            return invalidate(reason: .corruptedData)
        case .invalidated:
            guard state != .invalid else { return [] }
            return invalidate(reason: .documentInvalidated)
        case .localStorageRemoved:
            return removeLocalStorage()
        case .downloadRequested, .downloadFinished, .downloadFailed, .downloadCancelled:
            return handleDownload(event)
        case .localChangeCommitted:
            return localChangeCommitted()
        case .syncRequested(let trigger):
            return syncRequested(trigger)
        case .responseReceived:
            return responseReceived()
        case .responseApplied(let hasLocalChanges):
            return responseApplied(hasLocalChanges: hasLocalChanges)
        case .requestFailed(let error):
            return requestFailed(error)
        case .listeningFailed(let error):
            return listeningFailed(error)
        case .listeningResumed:
            guard listeningConnectionLost else { return [] }
            listeningConnectionLost = false
            return [.post(.didResumeListening)]
        case .stopSyncing(let cancelCurrentRequest):
            return stopSyncing(cancelCurrentRequest: cancelCurrentRequest)
        case .reauthenticationSucceeded:
            return reauthenticationSucceeded()
        case .reauthenticationFailed(let error):
            return state == .invalid ? [.refuse(.documentInvalidated)] : [.post(.didFailReauthentication(error))]
        case .startListening:
            return startListening()
        case .stopListening:
            wantsServerChanges = false
            return closeChannel()
        case .delayChanged(let delay):
            return delayChanged(delay)
        }
    }
}

// MARK: - Local data and migrations

extension DocumentStateMachine {
    private mutating func migrationNeeded(_ migration: Migration) -> [Action] {
        guard state == .unknown, !isDownloading else { return [] }
        localData = .absent
        switch migration {
        case .content:
            state = .needsContentMigration
            return []
        case .databaseReset:
            // The reset begins as soon as it is detected.
            state = .resettingForDatabaseMigration
            return [.performMigration(.databaseReset)]
        }
    }

    private mutating func migrationStarted(_ migration: Migration) -> [Action] {
        switch (migration, state) {
        case (.content, .needsContentMigration):
            state = .migratingContent
            return [.performMigration(.content)]
        case (.content, .migratingContent):
            return [.refuse(.performingContentMigration)]
        case (.content, .unknown):
            return [.refuse(.notDownloaded)]
        case (.content, .invalid):
            return [.refuse(.documentInvalidated)]
        case (.content, _):
            return [.refuse(.migrationNotNeeded)]
        case (.databaseReset, .needsResetForDatabaseMigration):
            guard !awaitsReauthentication else { return [] }
            return startDatabaseReset()
        case (.databaseReset, _):
            return []
        }
    }

    private mutating func startDatabaseReset() -> [Action] {
        state = .resettingForDatabaseMigration
        var actions: [Action] = []
        if retryScheduled {
            retryScheduled = false
            actions.append(.cancelRetry)
        }
        actions.append(.performMigration(.databaseReset))
        return actions
    }

    private mutating func migrationFinished(_ migration: Migration, hasLocalChanges: Bool) -> [Action] {
        switch (migration, state) {
        case (.content, .migratingContent), (.databaseReset, .resettingForDatabaseMigration):
            consecutiveFailures = 0
            return becomeOperational(hasLocalChanges: hasLocalChanges, openingChannelStartsCycle: true)
        default:
            return []
        }
    }

    private mutating func migrationFailed(_ migration: Migration, _ error: InstantError) -> [Action] {
        switch (migration, state) {
        case (.content, .migratingContent):
            state = .needsContentMigration
            return []
        case (.databaseReset, .resettingForDatabaseMigration):
            state = .needsResetForDatabaseMigration
            if error.code == .authenticationFailed {
                awaitsReauthentication = true
                return [.post(.didFailAuthentication)]
            }
            var actions: [Action] = [.post(.didFailSyncing(error))]
            if error.isRetryable {
                consecutiveFailures += 1
                actions += scheduleRetry()
            }
            return actions
        default:
            return []
        }
    }

    /// Settles in `clean` or `dirty` once the data is usable, opening the announcement channel if
    /// the app asked for it and arming the automatic sync for pending changes.
    private mutating func becomeOperational(hasLocalChanges: Bool, openingChannelStartsCycle: Bool) -> [Action] {
        self.hasLocalChanges = hasLocalChanges
        state = hasLocalChanges ? .dirty : .clean
        var actions: [Action] = []
        if wantsServerChanges, !isListening, !awaitsReauthentication {
            isListening = true
            actions.append(.startListening)
            if openingChannelStartsCycle { return actions + beginCycle(trigger: .manual) }
        }
        actions += armAutomaticSyncIfNeeded()
        return actions
    }

    private mutating func invalidate(reason: InstantError) -> [Action] {
        let actions = tearDown(reason: reason)
        state = .invalid
        localData = .absent
        wantsServerChanges = false
        return actions
    }

    private mutating func removeLocalStorage() -> [Action] {
        let actions = tearDown(reason: .cancelled)
        state = .unknown
        localData = .absent
        hasLocalChanges = false
        awaitsReauthentication = false
        wantsServerChanges = false
        consecutiveFailures = 0
        return actions
    }

    /// Stops all activity: download, request, timers, channel; invalidates the documents.
    private mutating func tearDown(reason: InstantError) -> [Action] {
        var actions: [Action] = []
        if isDownloading {
            isDownloading = false
            actions += [.cancelDownload, .post(.didFailDownload(reason))]
        }
        if cycle != nil {
            cycle = nil
            actions += [.cancelRequest, .post(.didFailSyncing(reason))]
        }
        actions += cancelTimers()
        actions += closeChannel()
        actions.append(.invalidateDocuments)
        return actions
    }
}

// MARK: - Download

extension DocumentStateMachine {
    private mutating func handleDownload(_ event: Event) -> [Action] {
        switch (event, state) {
        case (.downloadRequested, .unknown):
            guard localData == .absent else { return [.refuse(.alreadyDownloaded)] }
            guard !isDownloading else { return [] }
            isDownloading = true
            return [.startDownload]
        case (.downloadRequested, .invalid):
            return [.refuse(.documentInvalidated)]
        case (.downloadRequested, _):
            return [.refuse(.alreadyDownloaded)]
        case (.downloadFinished, .unknown) where isDownloading:
            isDownloading = false
            // A download authenticates with a fresh token, so a pending reauthentication is over.
            awaitsReauthentication = false
            return [.post(.didFinishDownload)]
                + becomeOperational(hasLocalChanges: false, openingChannelStartsCycle: false)
        case (.downloadFailed(let error), .unknown) where isDownloading:
            isDownloading = false
            return [.invalidateDocuments, .post(.didFailDownload(error))]
        case (.downloadCancelled, .unknown) where isDownloading:
            isDownloading = false
            return [.cancelDownload, .invalidateDocuments, .post(.didFailDownload(.cancelled))]
        default:
            return []
        }
    }
}

// MARK: - Editing and the sync cycle

extension DocumentStateMachine {
    private mutating func localChangeCommitted() -> [Action] {
        switch state {
        case .clean, .dirty:
            hasLocalChanges = true
            state = .dirty
            return armAutomaticSyncIfNeeded()
        case .sendingChanges, .receivingChanges:
            // The running cycle sends them before it ends.
            hasLocalChanges = true
            return []
        default:
            return []
        }
    }

    /// (Re)starts the automatic-sync timer when there are changes to send and nothing forbids it.
    private mutating func armAutomaticSyncIfNeeded() -> [Action] {
        guard state == .dirty, !awaitsReauthentication, case .after(let delay) = automaticSyncDelay else {
            return []
        }
        automaticSyncScheduled = true
        return [.scheduleAutomaticSync(after: delay)]
    }

    private mutating func syncRequested(_ trigger: SyncTrigger) -> [Action] {
        switch state {
        case .clean, .dirty:
            guard isCurrent(trigger) else { return [] }
            if awaitsReauthentication {
                return trigger == .manual ? [.post(.didFailAuthentication)] : []
            }
            return beginCycle(trigger: trigger)
        case .sendingChanges, .receivingChanges:
            if trigger == .manual {
                cycle?.stopsAfterCurrentRequest = false
            } else if trigger == .serverPoke, isListening {
                cycle?.serverChangedMeanwhile = true
            }
            return []
        case .needsContentMigration:
            return trigger == .manual ? [.post(.didFailSyncing(.contentMigrationNeeded))] : []
        case .needsResetForDatabaseMigration:
            guard trigger == .manual || (trigger == .retryDelayElapsed && retryScheduled) else { return [] }
            if awaitsReauthentication {
                return trigger == .manual ? [.post(.didFailAuthentication)] : []
            }
            if trigger == .retryDelayElapsed { retryScheduled = false }
            return startDatabaseReset()
        default:
            return []
        }
    }

    /// Whether a trigger still stands: timers that were cancelled and pokes from a closed
    /// channel are ignored.
    private func isCurrent(_ trigger: SyncTrigger) -> Bool {
        switch trigger {
        case .manual: true
        case .localChangesDelayElapsed: automaticSyncScheduled
        case .retryDelayElapsed: retryScheduled
        case .serverPoke: isListening
        }
    }

    /// Starts a cycle from `clean` or `dirty`: send if there are local changes, else fetch.
    private mutating func beginCycle(trigger: SyncTrigger) -> [Action] {
        var actions: [Action] = []
        if automaticSyncScheduled {
            automaticSyncScheduled = false
            if trigger != .localChangesDelayElapsed { actions.append(.cancelAutomaticSync) }
        }
        if retryScheduled {
            retryScheduled = false
            if trigger != .retryDelayElapsed { actions.append(.cancelRetry) }
        }
        if hasLocalChanges {
            state = .sendingChanges
            cycle = Cycle(phase: .awaitingPushResponse)
            actions += [.post(.didBeginSyncing), .sendChanges]
        } else {
            state = .receivingChanges
            cycle = Cycle(phase: .awaitingFetchResponse)
            actions += [.post(.didBeginSyncing), .fetchChanges]
        }
        return actions
    }

    private mutating func responseReceived() -> [Action] {
        switch cycle?.phase {
        case .awaitingPushResponse:
            state = .receivingChanges
            cycle?.phase = .applyingResponse
            return [.post(.syncCycleDidChangeState(.receivingChanges)), .applyResponse]
        case .awaitingFetchResponse:
            cycle?.phase = .applyingResponse
            return [.applyResponse]
        case .applyingResponse, nil:
            return []
        }
    }

    private mutating func responseApplied(hasLocalChanges: Bool) -> [Action] {
        guard let current = cycle, current.phase == .applyingResponse else { return [] }
        self.hasLocalChanges = hasLocalChanges
        consecutiveFailures = 0
        if current.stopsAfterCurrentRequest {
            endCycle()
            return [.post(.didFinishSyncing)]
        }
        if hasLocalChanges {
            state = .sendingChanges
            cycle?.phase = .awaitingPushResponse
            return [.post(.syncCycleDidChangeState(.sendingChanges)), .sendChanges]
        }
        if current.serverChangedMeanwhile {
            cycle?.serverChangedMeanwhile = false
            cycle?.phase = .awaitingFetchResponse
            return [.fetchChanges]
        }
        endCycle()
        return [.post(.didFinishSyncing)]
    }

    /// Ends the cycle in `dirty` or `clean`, depending on unsynced changes.
    private mutating func endCycle() {
        cycle = nil
        state = hasLocalChanges ? .dirty : .clean
    }

    private mutating func requestFailed(_ error: InstantError) -> [Action] {
        if let current = cycle {
            endCycle()
            if error.code == .authenticationFailed {
                awaitsReauthentication = true
                return closeChannel() + [.post(.didFailAuthentication)]
            }
            if error.isRetryable {
                consecutiveFailures += 1
                let retry = current.stopsAfterCurrentRequest ? [] : scheduleRetry()
                return [.post(.didFailSyncing(error))] + retry
            }
            wantsServerChanges = false
            return closeChannel() + [.post(.didFailSyncing(error))]
        }
        return []
    }

    /// The listening connection failed: network failures are posted once (the listener keeps
    /// trying), a refused token stops syncing until reauthentication, anything else ends
    /// listening (``Event/startListening`` reopens it).
    private mutating func listeningFailed(_ error: InstantError) -> [Action] {
        guard isListening else { return [] }
        if error.code == .authenticationFailed {
            // A running cycle meets the refusal too and reports it when it ends.
            guard cycle == nil else { return closeChannel() }
            awaitsReauthentication = true
            return cancelTimers() + closeChannel() + [.post(.didFailAuthentication)]
        }
        if error.isRetryable {
            guard !listeningConnectionLost else { return [] }
            listeningConnectionLost = true
            return [.post(.didFailListening(error))]
        }
        wantsServerChanges = false
        return closeChannel() + [.post(.didFailListening(error))]
    }

    /// Schedules the next retry, the delay growing with the consecutive failures up to the
    /// policy's cap; retries never stop on their own.
    private mutating func scheduleRetry() -> [Action] {
        let attempt = max(consecutiveFailures, 1)
        retryScheduled = true
        let delay = retryPolicy.delay(beforeAttempt: attempt, randomFraction: nextRandomFraction())
        return [.scheduleRetry(after: delay)]
    }

    private mutating func stopSyncing(cancelCurrentRequest: Bool) -> [Action] {
        var actions: [Action] = []
        if cycle != nil {
            if cancelCurrentRequest {
                endCycle()
                actions += [.cancelRequest, .post(.didFailSyncing(.cancelled))]
            } else {
                cycle?.stopsAfterCurrentRequest = true
            }
        }
        if retryScheduled {
            retryScheduled = false
            actions.append(.cancelRetry)
        }
        return actions
    }

    private mutating func cancelTimers() -> [Action] {
        var actions: [Action] = []
        if automaticSyncScheduled {
            automaticSyncScheduled = false
            actions.append(.cancelAutomaticSync)
        }
        if retryScheduled {
            retryScheduled = false
            actions.append(.cancelRetry)
        }
        return actions
    }
}

// MARK: - Authentication and configuration

extension DocumentStateMachine {
    private mutating func reauthenticationSucceeded() -> [Action] {
        if state == .invalid { return [.refuse(.documentInvalidated)] }
        var actions: [Action] = [.post(.didFinishReauthentication)]
        guard awaitsReauthentication else { return actions }
        awaitsReauthentication = false
        switch state {
        case .clean, .dirty:
            if wantsServerChanges, !isListening {
                isListening = true
                actions.append(.startListening)
            }
            actions += beginCycle(trigger: .manual)
        case .needsResetForDatabaseMigration:
            actions += startDatabaseReset()
        default:
            break
        }
        return actions
    }

    private mutating func startListening() -> [Action] {
        guard state != .invalid else { return [] }
        wantsServerChanges = true
        guard !isListening, !awaitsReauthentication, state.isOperational else { return [] }
        isListening = true
        var actions: [Action] = [.startListening]
        if state == .clean || state == .dirty {
            // Catch up with what changed while nobody listened.
            actions += beginCycle(trigger: .manual)
        }
        return actions
    }

    private mutating func closeChannel() -> [Action] {
        guard isListening else { return [] }
        isListening = false
        listeningConnectionLost = false
        return [.stopListening]
    }

    private mutating func delayChanged(_ delay: AutomaticSyncDelay) -> [Action] {
        automaticSyncDelay = delay
        switch delay {
        case .disabled:
            guard automaticSyncScheduled else { return [] }
            automaticSyncScheduled = false
            return [.cancelAutomaticSync]
        case .after:
            return armAutomaticSyncIfNeeded()
        }
    }
}
