/// The document descriptor's states and sync cycle, as a value that takes events and returns
/// the actions its owner (the descriptor's action executor) must perform.
///
/// The machine does no I/O and reads no clock: timers are actions carrying durations, and the
/// jitter of retry delays comes from the injected random number generator. Feed it every
/// ``Event`` in the order they happen and perform the returned ``Action``s in order.
///
/// Each stage of the lifecycle (``Stage``) carries the data that matters in it and nothing else:
/// a sync cycle exists only while syncing, timers only at rest, a pending reauthentication
/// only where syncing could happen. The observable ``state`` is derived from the stage. Beside
/// the stage sit only the app's settings (whether it wants server changes, the automatic-sync
/// delay) and the retry policy.
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
    /// Where the descriptor is in its lifecycle, with the data of that stage.
    enum Stage: Sendable, Hashable {
        /// `unknown`, with what is known of the layer's local data.
        case unknown(LocalData)
        /// `needsContentMigration`.
        case needsContentMigration
        /// `migratingContent`.
        case migratingContent
        /// `needsResetForDatabaseMigration`: what the reset waits for, and the failed attempts
        /// so far (they set the next retry's delay).
        case needsReset(waitingFor: ResetTrigger, consecutiveFailures: Int)
        /// `resettingForDatabaseMigration`, with the failed attempts before this one.
        case resetting(consecutiveFailures: Int)
        /// `clean`, `dirty`, `sendingChanges` or `receivingChanges`: the data is usable.
        case usable(Usable)
        /// `invalid`.
        case invalid
    }

    /// What is known of the local data while the state is `unknown`.
    enum LocalData: Sendable, Hashable {
        /// Nothing is downloaded.
        case absent
        /// Downloaded in an earlier launch; opened when a document is first obtained.
        case found
        /// Being opened (``Action/openLocalData`` was returned).
        case opening
        /// A download runs.
        case downloading
    }

    /// What restarts a database reset that could not finish.
    enum ResetTrigger: Sendable, Hashable {
        /// A manual sync (the failure was neither a network failure nor a refused token).
        case sync
        /// The retry timer (or a manual sync before it fires).
        case retry
        /// A successful reauthentication: the server refused the token.
        case reauthentication
    }

    /// The data of a usable layer.
    struct Usable: Sendable, Hashable {
        /// Whether the local store holds changes the server has not confirmed (`dirty`).
        var hasLocalChanges: Bool
        /// The channel through which the server announces changes.
        var channel = Channel.closed
        /// What the layer is doing.
        var activity = Activity.resting(Timers())
        /// Network failures since the last successful request; they set the next retry's delay.
        var consecutiveFailures = 0
    }

    /// The announcement channel.
    enum Channel: Sendable, Hashable {
        /// Not open.
        case closed
        /// Open and connected (or connecting for the first time).
        case open
        /// Open, but its connection dropped and did fail listening was posted; the listener
        /// reconnects by itself.
        case connectionLost
    }

    /// What a usable layer is doing.
    enum Activity: Sendable, Hashable {
        /// Nothing runs; the timers say what is scheduled.
        case resting(Timers)
        /// The server refused the token: nothing syncs, and no timer runs, until reauthentication.
        case awaitingReauthentication
        /// A sync cycle runs.
        case syncing(Cycle)
    }

    /// The timers of a resting layer.
    struct Timers: Sendable, Hashable {
        /// The automatic sync of local changes (only while `dirty`).
        var automaticSync = false
        /// The retry after a network failure.
        var retry = false
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
        /// The server announced a change during the cycle: fetch what it announced before ending.
        var serverChangedMeanwhile = false
    }

    /// The stage, with its data.
    private(set) var stage = Stage.unknown(.absent)
    /// Whether the app wants server changes announced (acted on once the data is usable).
    private(set) var wantsServerChanges = false
    /// `delayForSyncingLocalChanges`.
    private(set) var automaticSyncDelay: AutomaticSyncDelay
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
        self.automaticSyncDelay = automaticSyncDelay
        self.retryPolicy = retryPolicy
        self.randomNumberGenerator = randomNumberGenerator
    }
}

extension DocumentStateMachine: Equatable {
    /// Two machines are equal when everything but their random number generators is.
    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.stage == rhs.stage && lhs.wantsServerChanges == rhs.wantsServerChanges
            && lhs.automaticSyncDelay == rhs.automaticSyncDelay && lhs.retryPolicy == rhs.retryPolicy
    }
}

// MARK: - What the stage says

extension DocumentStateMachine {
    /// The observable state.
    var state: InstantDocumentState {
        switch stage {
        case .unknown: .unknown
        case .needsContentMigration: .needsContentMigration
        case .migratingContent: .migratingContent
        case .needsReset: .needsResetForDatabaseMigration
        case .resetting: .resettingForDatabaseMigration
        case .usable(let usable):
            if case .syncing(let cycle) = usable.activity {
                cycle.phase == .awaitingPushResponse ? .sendingChanges : .receivingChanges
            } else {
                usable.hasLocalChanges ? .dirty : .clean
            }
        case .invalid: .invalid
        }
    }

    /// Whether the layer's data is in the local store: downloaded (opened or not) and not
    /// invalid.
    var isDownloaded: Bool {
        switch stage {
        case .unknown(.found), .unknown(.opening): true
        case .unknown, .invalid: false
        default: true
        }
    }

    /// Whether a download is running.
    var isDownloading: Bool { stage == .unknown(.downloading) }

    /// The usable layer's data, if the layer is usable.
    var usable: Usable? {
        if case .usable(let usable) = stage { usable } else { nil }
    }

    /// The running sync cycle, if any.
    var cycle: Cycle? {
        if case .syncing(let cycle) = usable?.activity { cycle } else { nil }
    }

    /// Whether the local store holds changes the server has not confirmed (known once usable).
    var hasLocalChanges: Bool { usable?.hasLocalChanges ?? false }

    /// Whether the announcement channel is open.
    var isListening: Bool { (usable?.channel ?? .closed) != .closed }

    /// Whether the open channel lost its connection (and did fail listening was posted).
    var listeningConnectionLost: Bool { usable?.channel == .connectionLost }

    /// Whether the server refused the token; no sync is attempted until reauthentication.
    var awaitsReauthentication: Bool {
        switch stage {
        case .needsReset(waitingFor: .reauthentication, _): true
        case .usable(let usable): usable.activity == .awaitingReauthentication
        default: false
        }
    }

    /// Whether an automatic-sync timer is set.
    var automaticSyncScheduled: Bool {
        if case .resting(let timers) = usable?.activity { timers.automaticSync } else { false }
    }

    /// Whether a retry timer is set.
    var retryScheduled: Bool {
        switch stage {
        case .needsReset(waitingFor: .retry, _): true
        case .usable(let usable): if case .resting(let timers) = usable.activity { timers.retry } else { false }
        default: false
        }
    }

    /// Network failures since the last successful request.
    var consecutiveFailures: Int {
        switch stage {
        case .needsReset(_, let failures), .resetting(let failures): failures
        case .usable(let usable): usable.consecutiveFailures
        default: 0
        }
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
            guard stage == .unknown(.absent) else { return [] }
            stage = .unknown(.found)
            return []
        case .localDataRequested:
            guard stage == .unknown(.found) else { return [] }
            stage = .unknown(.opening)
            return [.openLocalData]
        case .localDataOpened(let hasLocalChanges):
            guard case .unknown(let localData) = stage, localData != .downloading else { return [] }
            return becomeUsable(hasLocalChanges: hasLocalChanges, openingChannelStartsCycle: true)
        case .migrationNeeded(let migration):
            return migrationNeeded(migration)
        case .migrationStarted(let migration):
            return migrationStarted(migration)
        case .migrationFinished(let migration, let hasLocalChanges):
            return migrationFinished(migration, hasLocalChanges: hasLocalChanges)
        case .migrationFailed(let migration, let error):
            return migrationFailed(migration, error)
        case .corruptionDetected:
            guard stage != .invalid else { return [] }
            return invalidate(reason: .corruptedData)
        case .invalidated:
            guard stage != .invalid else { return [] }
            return invalidate(reason: .documentInvalidated)
        case .localStorageRemoved:
            let actions = tearDown(reason: .cancelled)
            stage = .unknown(.absent)
            wantsServerChanges = false
            return actions
        case .downloadRequested, .downloadFinished, .downloadFailed, .downloadCancelled:
            return handleDownload(event)
        case .localChangeCommitted:
            guard var usable else { return [] }
            // While a cycle runs, it sends them before it ends.
            usable.hasLocalChanges = true
            stage = .usable(usable)
            return armAutomaticSyncIfNeeded()
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
            guard var usable, usable.channel == .connectionLost else { return [] }
            usable.channel = .open
            stage = .usable(usable)
            return [.post(.didResumeListening)]
        case .stopSyncing(let cancelCurrentRequest):
            return stopSyncing(cancelCurrentRequest: cancelCurrentRequest)
        case .reauthenticationSucceeded:
            return reauthenticationSucceeded()
        case .reauthenticationFailed(let error):
            return stage == .invalid ? [.refuse(.documentInvalidated)] : [.post(.didFailReauthentication(error))]
        case .startListening:
            return startListening()
        case .stopListening:
            wantsServerChanges = false
            guard var usable else { return [] }
            let actions = Self.closeChannel(&usable)
            stage = .usable(usable)
            return actions
        case .delayChanged(let delay):
            return delayChanged(delay)
        }
    }
}

// MARK: - Local data and migrations

extension DocumentStateMachine {
    private mutating func migrationNeeded(_ migration: Migration) -> [Action] {
        guard case .unknown(let localData) = stage, localData != .downloading else { return [] }
        switch migration {
        case .content:
            stage = .needsContentMigration
            return []
        case .databaseReset:
            // The reset begins as soon as it is detected.
            stage = .resetting(consecutiveFailures: 0)
            return [.performMigration(.databaseReset)]
        }
    }

    private mutating func migrationStarted(_ migration: Migration) -> [Action] {
        switch (migration, stage) {
        case (.content, .needsContentMigration):
            stage = .migratingContent
            return [.performMigration(.content)]
        case (.content, .migratingContent):
            return [.refuse(.performingContentMigration)]
        case (.content, .unknown):
            return [.refuse(.notDownloaded)]
        case (.content, .invalid):
            return [.refuse(.documentInvalidated)]
        case (.content, _):
            return [.refuse(.migrationNotNeeded)]
        case (.databaseReset, .needsReset(let trigger, let failures)) where trigger != .reauthentication:
            return startDatabaseReset(consecutiveFailures: failures, cancellingRetry: trigger == .retry)
        case (.databaseReset, _):
            return []
        }
    }

    private mutating func startDatabaseReset(consecutiveFailures: Int, cancellingRetry: Bool) -> [Action] {
        stage = .resetting(consecutiveFailures: consecutiveFailures)
        return (cancellingRetry ? [.cancelRetry] : []) + [.performMigration(.databaseReset)]
    }

    private mutating func migrationFinished(_ migration: Migration, hasLocalChanges: Bool) -> [Action] {
        switch (migration, stage) {
        case (.content, .migratingContent), (.databaseReset, .resetting):
            return becomeUsable(hasLocalChanges: hasLocalChanges, openingChannelStartsCycle: true)
        default:
            return []
        }
    }

    private mutating func migrationFailed(_ migration: Migration, _ error: InstantError) -> [Action] {
        switch (migration, stage) {
        case (.content, .migratingContent):
            stage = .needsContentMigration
            return []
        case (.databaseReset, .resetting(let failures)):
            if error.code == .authenticationFailed {
                stage = .needsReset(waitingFor: .reauthentication, consecutiveFailures: failures)
                return [.post(.didFailAuthentication)]
            }
            guard error.isRetryable else {
                stage = .needsReset(waitingFor: .sync, consecutiveFailures: failures)
                return [.post(.didFailSyncing(error))]
            }
            stage = .needsReset(waitingFor: .retry, consecutiveFailures: failures + 1)
            return [.post(.didFailSyncing(error)), .scheduleRetry(after: nextRetryDelay(afterFailures: failures + 1))]
        default:
            return []
        }
    }

    /// Settles in `clean` or `dirty` once the data is usable, opening the announcement channel if
    /// the app asked for it and arming the automatic sync for pending changes.
    private mutating func becomeUsable(hasLocalChanges: Bool, openingChannelStartsCycle: Bool) -> [Action] {
        var usable = Usable(hasLocalChanges: hasLocalChanges)
        var actions: [Action] = []
        if wantsServerChanges {
            usable.channel = .open
            actions.append(.startListening)
            if openingChannelStartsCycle {
                actions += Self.beginCycle(&usable, trigger: .manual)
                stage = .usable(usable)
                return actions
            }
        }
        stage = .usable(usable)
        return actions + armAutomaticSyncIfNeeded()
    }

    private mutating func invalidate(reason: InstantError) -> [Action] {
        let actions = tearDown(reason: reason)
        stage = .invalid
        wantsServerChanges = false
        return actions
    }

    /// Stops all activity: download, request, timers, channel; invalidates the documents.
    private func tearDown(reason: InstantError) -> [Action] {
        var actions: [Action] = []
        switch stage {
        case .unknown(.downloading):
            actions += [.cancelDownload, .post(.didFailDownload(reason))]
        case .needsReset(waitingFor: .retry, _):
            actions.append(.cancelRetry)
        case .usable(var usable):
            switch usable.activity {
            case .syncing: actions += [.cancelRequest, .post(.didFailSyncing(reason))]
            case .resting(let timers): actions += Self.cancelling(timers)
            case .awaitingReauthentication: break
            }
            actions += Self.closeChannel(&usable)
        default:
            break
        }
        actions.append(.invalidateDocuments)
        return actions
    }
}

// MARK: - Download

extension DocumentStateMachine {
    private mutating func handleDownload(_ event: Event) -> [Action] {
        switch (event, stage) {
        case (.downloadRequested, .unknown(.absent)):
            stage = .unknown(.downloading)
            return [.startDownload]
        case (.downloadRequested, .unknown(.downloading)):
            return []
        case (.downloadRequested, .invalid):
            return [.refuse(.documentInvalidated)]
        case (.downloadRequested, _):
            return [.refuse(.alreadyDownloaded)]
        case (.downloadFinished, .unknown(.downloading)):
            return [.post(.didFinishDownload)] + becomeUsable(hasLocalChanges: false, openingChannelStartsCycle: false)
        case (.downloadFailed(let error), .unknown(.downloading)):
            stage = .unknown(.absent)
            return [.invalidateDocuments, .post(.didFailDownload(error))]
        case (.downloadCancelled, .unknown(.downloading)):
            stage = .unknown(.absent)
            return [.cancelDownload, .invalidateDocuments, .post(.didFailDownload(.cancelled))]
        default:
            return []
        }
    }
}

// MARK: - Editing and the sync cycle

extension DocumentStateMachine {
    /// (Re)starts the automatic-sync timer when a resting layer has changes to send and automatic
    /// sync is on.
    private mutating func armAutomaticSyncIfNeeded() -> [Action] {
        guard var usable, usable.hasLocalChanges, case .resting(var timers) = usable.activity,
            case .after(let delay) = automaticSyncDelay
        else { return [] }
        timers.automaticSync = true
        usable.activity = .resting(timers)
        stage = .usable(usable)
        return [.scheduleAutomaticSync(after: delay)]
    }

    private mutating func syncRequested(_ trigger: SyncTrigger) -> [Action] {
        switch stage {
        case .usable(var usable):
            switch usable.activity {
            case .resting(let timers):
                guard Self.isCurrent(trigger, timers: timers, channel: usable.channel) else { return [] }
                let actions = Self.beginCycle(&usable, trigger: trigger)
                stage = .usable(usable)
                return actions
            case .awaitingReauthentication:
                return trigger == .manual ? [.post(.didFailAuthentication)] : []
            case .syncing(var cycle):
                if trigger == .manual {
                    cycle.stopsAfterCurrentRequest = false
                } else if trigger == .serverPoke, usable.channel != .closed {
                    cycle.serverChangedMeanwhile = true
                }
                usable.activity = .syncing(cycle)
                stage = .usable(usable)
                return []
            }
        case .needsContentMigration:
            return trigger == .manual ? [.post(.didFailSyncing(.contentMigrationNeeded))] : []
        case .needsReset(.reauthentication, _):
            return trigger == .manual ? [.post(.didFailAuthentication)] : []
        case .needsReset(let waitingFor, let failures):
            switch trigger {
            case .manual:
                return startDatabaseReset(consecutiveFailures: failures, cancellingRetry: waitingFor == .retry)
            case .retryDelayElapsed where waitingFor == .retry:
                return startDatabaseReset(consecutiveFailures: failures, cancellingRetry: false)
            default:
                return []
            }
        default:
            return []
        }
    }

    /// Whether a trigger still stands: timers that were cancelled and pokes from a closed
    /// channel are ignored.
    private static func isCurrent(_ trigger: SyncTrigger, timers: Timers, channel: Channel) -> Bool {
        switch trigger {
        case .manual: true
        case .localChangesDelayElapsed: timers.automaticSync
        case .retryDelayElapsed: timers.retry
        case .serverPoke: channel != .closed
        }
    }

    /// Starts a cycle in a layer that does not sync: send if there are local changes, else fetch
    /// (what the server announced, for a poke).
    private static func beginCycle(_ usable: inout Usable, trigger: SyncTrigger) -> [Action] {
        var actions: [Action] = []
        if case .resting(let timers) = usable.activity {
            if timers.automaticSync, trigger != .localChangesDelayElapsed { actions.append(.cancelAutomaticSync) }
            if timers.retry, trigger != .retryDelayElapsed { actions.append(.cancelRetry) }
        }
        if usable.hasLocalChanges {
            usable.activity = .syncing(Cycle(phase: .awaitingPushResponse))
            return actions + [.post(.didBeginSyncing), .sendChanges]
        }
        usable.activity = .syncing(Cycle(phase: .awaitingFetchResponse))
        return actions + [.post(.didBeginSyncing), trigger == .serverPoke ? .fetchAnnouncedChanges : .fetchChanges]
    }

    private mutating func responseReceived() -> [Action] {
        guard var usable, case .syncing(var cycle) = usable.activity else { return [] }
        let actions: [Action]
        switch cycle.phase {
        case .awaitingPushResponse:
            actions = [.post(.syncCycleDidChangeState(.receivingChanges)), .applyResponse]
        case .awaitingFetchResponse:
            actions = [.applyResponse]
        case .applyingResponse:
            return []
        }
        cycle.phase = .applyingResponse
        usable.activity = .syncing(cycle)
        stage = .usable(usable)
        return actions
    }

    private mutating func responseApplied(hasLocalChanges: Bool) -> [Action] {
        guard var usable, case .syncing(var cycle) = usable.activity, cycle.phase == .applyingResponse else {
            return []
        }
        usable.hasLocalChanges = hasLocalChanges
        usable.consecutiveFailures = 0
        defer { stage = .usable(usable) }
        if !cycle.stopsAfterCurrentRequest {
            if hasLocalChanges {
                cycle.phase = .awaitingPushResponse
                usable.activity = .syncing(cycle)
                return [.post(.syncCycleDidChangeState(.sendingChanges)), .sendChanges]
            }
            if cycle.serverChangedMeanwhile {
                cycle.serverChangedMeanwhile = false
                cycle.phase = .awaitingFetchResponse
                usable.activity = .syncing(cycle)
                return [.fetchAnnouncedChanges]
            }
        }
        // Ends in `dirty` or `clean`, depending on unsynced changes.
        usable.activity = .resting(Timers())
        return [.post(.didFinishSyncing)]
    }

    private mutating func requestFailed(_ error: InstantError) -> [Action] {
        guard var usable, case .syncing(let cycle) = usable.activity else { return [] }
        defer { stage = .usable(usable) }
        if error.code == .authenticationFailed {
            usable.activity = .awaitingReauthentication
            return Self.closeChannel(&usable) + [.post(.didFailAuthentication)]
        }
        usable.activity = .resting(Timers())
        guard error.isRetryable else {
            wantsServerChanges = false
            return Self.closeChannel(&usable) + [.post(.didFailSyncing(error))]
        }
        usable.consecutiveFailures += 1
        guard !cycle.stopsAfterCurrentRequest else { return [.post(.didFailSyncing(error))] }
        usable.activity = .resting(Timers(retry: true))
        return [
            .post(.didFailSyncing(error)),
            .scheduleRetry(after: nextRetryDelay(afterFailures: usable.consecutiveFailures)),
        ]
    }

    /// The listening connection failed: network failures are posted once (the listener keeps
    /// trying), a refused token stops syncing until reauthentication, anything else ends
    /// listening (``Event/startListening`` reopens it).
    private mutating func listeningFailed(_ error: InstantError) -> [Action] {
        guard var usable, usable.channel != .closed else { return [] }
        defer { stage = .usable(usable) }
        if error.code == .authenticationFailed {
            // A running cycle meets the refusal too and reports it when it ends.
            if case .syncing = usable.activity { return Self.closeChannel(&usable) }
            var actions: [Action] = []
            if case .resting(let timers) = usable.activity { actions += Self.cancelling(timers) }
            usable.activity = .awaitingReauthentication
            return actions + Self.closeChannel(&usable) + [.post(.didFailAuthentication)]
        }
        if error.isRetryable {
            guard usable.channel != .connectionLost else { return [] }
            usable.channel = .connectionLost
            return [.post(.didFailListening(error))]
        }
        wantsServerChanges = false
        return Self.closeChannel(&usable) + [.post(.didFailListening(error))]
    }

    /// The delay before the retry that follows `failures` consecutive failures: growing with them
    /// up to the policy's cap, jittered; retries never stop on their own.
    private mutating func nextRetryDelay(afterFailures failures: Int) -> Duration {
        let fraction = Double.random(in: 0..<1, using: &randomNumberGenerator)
        return retryPolicy.delay(beforeAttempt: max(failures, 1), randomFraction: fraction)
    }

    private mutating func stopSyncing(cancelCurrentRequest: Bool) -> [Action] {
        switch stage {
        case .needsReset(.retry, let failures):
            stage = .needsReset(waitingFor: .sync, consecutiveFailures: failures)
            return [.cancelRetry]
        case .usable(var usable):
            defer { stage = .usable(usable) }
            switch usable.activity {
            case .syncing where cancelCurrentRequest:
                usable.activity = .resting(Timers())
                return [.cancelRequest, .post(.didFailSyncing(.cancelled))]
            case .syncing(var cycle):
                cycle.stopsAfterCurrentRequest = true
                usable.activity = .syncing(cycle)
                return []
            case .resting(var timers) where timers.retry:
                timers.retry = false
                usable.activity = .resting(timers)
                return [.cancelRetry]
            case .resting, .awaitingReauthentication:
                return []
            }
        default:
            return []
        }
    }

    /// The actions that cancel the timers that are set.
    private static func cancelling(_ timers: Timers) -> [Action] {
        (timers.automaticSync ? [.cancelAutomaticSync] : []) + (timers.retry ? [.cancelRetry] : [])
    }
}

// MARK: - Authentication and configuration

extension DocumentStateMachine {
    private mutating func reauthenticationSucceeded() -> [Action] {
        let posted: [Action] = [.post(.didFinishReauthentication)]
        switch stage {
        case .invalid:
            return [.refuse(.documentInvalidated)]
        case .usable(var usable) where usable.activity == .awaitingReauthentication:
            var actions = posted
            if wantsServerChanges {
                usable.channel = .open
                actions.append(.startListening)
            }
            usable.activity = .resting(Timers())
            actions += Self.beginCycle(&usable, trigger: .manual)
            stage = .usable(usable)
            return actions
        case .needsReset(.reauthentication, let failures):
            return posted + startDatabaseReset(consecutiveFailures: failures, cancellingRetry: false)
        default:
            return posted
        }
    }

    private mutating func startListening() -> [Action] {
        guard stage != .invalid else { return [] }
        wantsServerChanges = true
        guard var usable, usable.channel == .closed, usable.activity != .awaitingReauthentication else { return [] }
        usable.channel = .open
        var actions: [Action] = [.startListening]
        if case .resting = usable.activity {
            // Catch up with what changed while nobody listened.
            actions += Self.beginCycle(&usable, trigger: .manual)
        }
        stage = .usable(usable)
        return actions
    }

    /// Closes the announcement channel if it is open.
    private static func closeChannel(_ usable: inout Usable) -> [Action] {
        guard usable.channel != .closed else { return [] }
        usable.channel = .closed
        return [.stopListening]
    }

    private mutating func delayChanged(_ delay: AutomaticSyncDelay) -> [Action] {
        automaticSyncDelay = delay
        switch delay {
        case .disabled:
            guard var usable, case .resting(var timers) = usable.activity, timers.automaticSync else { return [] }
            timers.automaticSync = false
            usable.activity = .resting(timers)
            stage = .usable(usable)
            return [.cancelAutomaticSync]
        case .after:
            return armAutomaticSyncIfNeeded()
        }
    }
}
