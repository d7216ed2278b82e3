extension DocumentStateMachine {
    /// Work the machine asks its owner to do after an event, in the order given.
    enum Action: Sendable, Hashable {
        /// Open the local data found at creation and report what it holds:
        /// ``Event/localDataOpened(hasLocalChanges:)``, ``Event/migrationNeeded(_:)`` or
        /// ``Event/corruptionDetected``.
        case openLocalData
        /// Download the PDF (if no other layer has) and the layer's records.
        case startDownload
        /// Cancel the running download.
        case cancelDownload
        /// Send the pending local changes; the response carries the server's changes.
        case sendChanges
        /// Ask the server for its changes since the last known revision.
        case fetchChanges
        /// Get the changes the server announced (a poke) since the last known revision: from the
        /// announcements themselves when they follow that revision up to the newest announced one,
        /// from the server as ``fetchChanges`` when they do not, and none at all when everything
        /// announced is already here (another fetch of the cycle took it); then report
        /// ``Event/responseReceived`` as for a request.
        case fetchAnnouncedChanges
        /// Apply the response just received to the local store, then report
        /// ``Event/responseApplied(hasLocalChanges:)``.
        case applyResponse
        /// Cancel the request in flight.
        case cancelRequest
        /// (Re)start the automatic-sync timer; when it fires, report
        /// ``Event/syncRequested(_:)`` with ``SyncTrigger/localChangesDelayElapsed``.
        case scheduleAutomaticSync(after: Duration)
        /// Cancel the automatic-sync timer if one is set.
        case cancelAutomaticSync
        /// Start the retry timer; when it fires, report ``Event/syncRequested(_:)`` with
        /// ``SyncTrigger/retryDelayElapsed``.
        case scheduleRetry(after: Duration)
        /// Cancel the retry timer if one is set.
        case cancelRetry
        /// Open the channel through which the server announces changes.
        case startListening
        /// Close that channel.
        case stopListening
        /// Run the given migration, then report its outcome.
        case performMigration(Migration)
        /// Make every document handed out so far unusable.
        case invalidateDocuments
        /// Post the notification, call the delegate and yield the event to the event sequences.
        case post(InstantDescriptorEvent)
        /// The API call that produced the event must fail with this error.
        case refuse(InstantError)
    }
}
