extension DocumentStateMachine {
    /// Which of the two kinds of local-data migration an event is about.
    enum Migration: Sendable, Hashable {
        /// Rewriting local data written by an older schema (`needsContentMigration`).
        case content
        /// Syncing pending changes and refetching the records with their permissions
        /// (`needsResetForDatabaseMigration`).
        case databaseReset
    }

    /// What started a sync cycle.
    enum SyncTrigger: Sendable, Hashable {
        /// The app called `sync()`, or `startListeningForServerChanges()` asked for fresh data.
        case manual
        /// The automatic-sync timer (`delayForSyncingLocalChanges` after the last edit) fired.
        case localChangesDelayElapsed
        /// The server announced a change while the descriptor listens.
        case serverPoke
        /// The retry timer scheduled after a network failure fired.
        case retryDelayElapsed
    }

    /// Something that happened to the descriptor: a call of its API, the outcome of an operation
    /// the owner performed for an earlier ``Action``, or a timer the owner scheduled.
    ///
    /// The owner must not deliver outcomes of operations it cancelled (after
    /// ``Action/cancelRequest`` or ``Action/cancelDownload``).
    enum Event: Sendable, Hashable {
        // Local data
        /// The descriptor was created for a layer the local store has (downloaded in an earlier
        /// launch). Its state stays `unknown` until the data is asked for.
        case localDataFound
        /// A document was obtained from the descriptor (or an API that works on the local data
        /// was called): the local data found earlier must be opened to determine the state.
        case localDataRequested
        /// The downloaded local data was opened with the current schema.
        case localDataOpened(hasLocalChanges: Bool)
        /// The local data was found to need a migration before use.
        case migrationNeeded(Migration)
        /// A migration was asked for (`attemptContentMigration()`, or the reset's own start).
        case migrationStarted(Migration)
        /// The migration completed; `hasLocalChanges` tells whether unsynced changes remain.
        case migrationFinished(Migration, hasLocalChanges: Bool)
        /// The migration failed.
        case migrationFailed(Migration, InstantError)
        /// The local data was found damaged.
        case corruptionDetected
        /// The client was invalidated, or it removed the storage of the descriptor's identifier.
        case invalidated
        /// `removeLocalStorage()` deleted the layer's data.
        case localStorageRemoved

        // Download
        /// `download(usingJWT:)` was called with a token for this layer.
        case downloadRequested
        /// The download (PDF and records) completed and was stored.
        case downloadFinished
        /// The download failed.
        case downloadFailed(InstantError)
        /// The download was cancelled through its `Progress`.
        case downloadCancelled

        // Editing and syncing
        /// An edit was committed to the local store.
        case localChangeCommitted
        /// Something asks for a sync cycle.
        case syncRequested(SyncTrigger)
        /// The server's response to the current request (push or fetch) arrived.
        case responseReceived
        /// The response was applied to the local store; `hasLocalChanges` tells whether changes
        /// the server has not seen remain (edits made meanwhile, or a partial push).
        case responseApplied(hasLocalChanges: Bool)
        /// The current request of the sync cycle failed. The error's code says how:
        /// `authenticationFailed`, retryable (`isRetryable`), or anything else.
        case requestFailed(InstantError)
        /// The connection on which the server announces changes dropped or could not be made.
        /// The listener tries again by itself after retryable failures.
        case listeningFailed(InstantError)
        /// The listener is connected again after ``listeningFailed(_:)``.
        case listeningResumed
        /// `stopSyncing(_:)` was called.
        case stopSyncing(cancelCurrentRequest: Bool)

        // Authentication
        /// `reauthenticate(withJWT:)` succeeded.
        case reauthenticationSucceeded
        /// `reauthenticate(withJWT:)` failed.
        case reauthenticationFailed(InstantError)

        // Configuration
        /// `startListeningForServerChanges()` was called.
        case startListening
        /// `stopListeningForServerChanges()` was called.
        case stopListening
        /// `delayForSyncingLocalChanges` was set to a valid value.
        case delayChanged(AutomaticSyncDelay)
    }
}
