import Testing

@testable import Instant

// The transition table of the document descriptor, derived from the state guide ("Understanding
// the Document State"), the InstantDocumentState reference and the descriptor reference.
//
// Each row reads: starting from <situation>, after <event>, the machine is in <state> and asks
// for <actions>, in that order. A situation is a state plus how it was reached (the events in
// `Situation.path`), because the flags behind a state matter (a pending retry, a refused token,
// an open channel for server changes).
//
// Every (situation, event) pair missing from the table is ignored: the state stays the same, no
// action is returned, and, unless the event is a setting (listening, sync delay), nothing in the
// machine changes at all. The test below walks every situation × every event.
//
// Common values: the automatic-sync delay is the default 1 s, and the random source always
// yields 0, so the first retry waits half of the 1 s ceiling (0.5 s).

private let networkError = InstantError(.couldNotReachServer, "The connection was lost.")
private let rejection = InstantError(.accessDenied, "The token does not allow writing.")
private let mismatch = InstantError.userIDMismatch(expected: "alice", found: "bob")
private let oneSecond = Duration.seconds(1)
private let firstRetry = Duration.milliseconds(500)

/// Named starting points for the table.
enum Situation: String, CaseIterable, CustomTestStringConvertible {
    case unknown, foundLocalData, downloading, needsContentMigration, migratingContent, needsReset, resetting
    case clean, dirty, sending, fetching, applying, invalid
    case cleanAwaitingReauthentication, dirtyWithRetryPending, cleanListening

    /// The events that lead from a fresh machine to this situation.
    var path: [DocumentStateMachine.Event] {
        switch self {
        case .unknown: []
        case .foundLocalData: [.localDataFound]
        case .downloading: [.downloadRequested]
        case .needsContentMigration: [.migrationNeeded(.content)]
        case .migratingContent: [.migrationNeeded(.content), .migrationStarted(.content)]
        case .needsReset: [.migrationNeeded(.databaseReset), .migrationFailed(.databaseReset, rejection)]
        case .resetting: [.migrationNeeded(.databaseReset)]
        case .clean: [.localDataOpened(hasLocalChanges: false)]
        case .dirty: [.localDataOpened(hasLocalChanges: true)]
        case .sending: [.localDataOpened(hasLocalChanges: true), .syncRequested(.manual)]
        case .fetching: [.localDataOpened(hasLocalChanges: false), .syncRequested(.manual)]
        case .applying: [.localDataOpened(hasLocalChanges: true), .syncRequested(.manual), .responseReceived]
        case .invalid: [.localDataOpened(hasLocalChanges: false), .corruptionDetected]
        case .cleanAwaitingReauthentication:
            [
                .localDataOpened(hasLocalChanges: false), .syncRequested(.manual),
                .requestFailed(.authenticationFailed),
            ]
        case .dirtyWithRetryPending:
            [.localDataOpened(hasLocalChanges: true), .syncRequested(.manual), .requestFailed(networkError)]
        case .cleanListening:
            [
                .localDataOpened(hasLocalChanges: false), .startListening, .responseReceived,
                .responseApplied(hasLocalChanges: false),
            ]
        }
    }

    /// The state the path ends in.
    var state: InstantDocumentState {
        switch self {
        case .unknown, .foundLocalData, .downloading: .unknown
        case .needsContentMigration: .needsContentMigration
        case .migratingContent: .migratingContent
        case .needsReset: .needsResetForDatabaseMigration
        case .resetting: .resettingForDatabaseMigration
        case .clean, .cleanAwaitingReauthentication, .cleanListening: .clean
        case .dirty, .dirtyWithRetryPending: .dirty
        case .sending: .sendingChanges
        case .fetching, .applying: .receivingChanges
        case .invalid: .invalid
        }
    }

    var testDescription: String { rawValue }

    func machine() -> DocumentStateMachine {
        var machine = DocumentStateMachine(randomNumberGenerator: ConstantRandomNumberGenerator(value: 0))
        for event in path { _ = machine.handle(event) }
        return machine
    }
}

/// Every event the table is checked against, with representative payloads.
let allEvents: [DocumentStateMachine.Event] = [
    .localDataFound, .localDataRequested, .localDataOpened(hasLocalChanges: false),
    .localDataOpened(hasLocalChanges: true),
    .migrationNeeded(.content), .migrationNeeded(.databaseReset),
    .migrationStarted(.content), .migrationStarted(.databaseReset),
    .migrationFinished(.content, hasLocalChanges: false), .migrationFinished(.databaseReset, hasLocalChanges: false),
    .migrationFailed(.content, rejection), .migrationFailed(.databaseReset, networkError),
    .corruptionDetected, .invalidated, .localStorageRemoved,
    .downloadRequested, .downloadFinished, .downloadFailed(networkError), .downloadCancelled,
    .localChangeCommitted,
    .syncRequested(.manual), .syncRequested(.localChangesDelayElapsed), .syncRequested(.serverPoke),
    .syncRequested(.retryDelayElapsed),
    .responseReceived, .responseApplied(hasLocalChanges: false), .responseApplied(hasLocalChanges: true),
    .requestFailed(.authenticationFailed), .requestFailed(networkError), .requestFailed(rejection),
    .listeningFailed(.authenticationFailed), .listeningFailed(networkError), .listeningFailed(rejection),
    .listeningResumed,
    .stopSyncing(cancelCurrentRequest: false), .stopSyncing(cancelCurrentRequest: true),
    .reauthenticationSucceeded, .reauthenticationFailed(mismatch),
    .startListening, .stopListening, .delayChanged(.disabled), .delayChanged(.after(.seconds(5))),
]

struct Row {
    var situation: Situation
    var event: DocumentStateMachine.Event
    var state: InstantDocumentState
    var actions: [DocumentStateMachine.Action]

    init(
        _ situation: Situation, _ event: DocumentStateMachine.Event, _ state: InstantDocumentState,
        _ actions: [DocumentStateMachine.Action]
    ) {
        self.situation = situation
        self.event = event
        self.state = state
        self.actions = actions
    }
}

/// What a situation must stop when the descriptor is invalidated or its storage removed, given
/// the error reported for the interrupted operation.
private func teardown(_ s: Situation, _ error: InstantError) -> [DocumentStateMachine.Action] {
    switch s {
    case .downloading: [.cancelDownload, .post(.didFailDownload(error))]
    case .sending, .fetching, .applying: [.cancelRequest, .post(.didFailSyncing(error))]
    case .dirty: [.cancelAutomaticSync]
    case .dirtyWithRetryPending: [.cancelRetry]
    case .cleanListening: [.stopListening]
    default: []
    }
}

/// Rows shared by every situation but `invalid`: reauthentication outcomes are reported, and
/// corruption, invalidation and removal stop everything and invalidate the documents.
private func commonRows(_ s: Situation) -> [Row] {
    [
        Row(s, .reauthenticationSucceeded, s.state, [.post(.didFinishReauthentication)]),
        Row(s, .reauthenticationFailed(mismatch), s.state, [.post(.didFailReauthentication(mismatch))]),
        Row(s, .corruptionDetected, .invalid, teardown(s, .corruptedData) + [.invalidateDocuments]),
        Row(s, .invalidated, .invalid, teardown(s, .documentInvalidated) + [.invalidateDocuments]),
        Row(s, .localStorageRemoved, .unknown, teardown(s, .cancelled) + [.invalidateDocuments]),
    ]
}

/// Rows shared by every situation whose data is downloaded (all but unknown, downloading, invalid).
private func downloadedRows(_ s: Situation) -> [Row] {
    [Row(s, .downloadRequested, s.state, [.refuse(.alreadyDownloaded)])]
        + (s == .needsContentMigration || s == .migratingContent
            ? [] : [Row(s, .migrationStarted(.content), s.state, [.refuse(.migrationNotNeeded)])])
}

/// Rows of a running sync cycle (sending, fetching, applying): how it ends.
private func cycleRows(_ s: Situation, fallback: InstantDocumentState) -> [Row] {
    [
        Row(s, .requestFailed(.authenticationFailed), fallback, [.post(.didFailAuthentication)]),
        Row(
            s, .requestFailed(networkError), fallback,
            [.post(.didFailSyncing(networkError)), .scheduleRetry(after: firstRetry)]),
        Row(s, .requestFailed(rejection), fallback, [.post(.didFailSyncing(rejection))]),
        Row(s, .stopSyncing(cancelCurrentRequest: false), s.state, []),
        Row(
            s, .stopSyncing(cancelCurrentRequest: true), fallback, [.cancelRequest, .post(.didFailSyncing(.cancelled))]),
        Row(s, .startListening, s.state, [.startListening]),
    ]
}

/// The whole table: the specific rows below, and the shared rows where no specific row overrides
/// them.
let transitionTable: [Row] =
    sharedRows.filter { shared in
        !specificRows.contains { $0.situation == shared.situation && $0.event == shared.event }
    } + specificRows

private let sharedRows: [Row] =
    Situation.allCases.filter { $0 != .invalid }.flatMap(commonRows)
    + [
        Situation.needsContentMigration, .migratingContent, .needsReset, .resetting, .clean, .dirty, .sending,
        .fetching,
        .applying, .cleanAwaitingReauthentication, .dirtyWithRetryPending, .cleanListening,
    ].flatMap(downloadedRows)
    + cycleRows(.sending, fallback: .dirty) + cycleRows(.fetching, fallback: .clean)
    + cycleRows(.applying, fallback: .dirty) + unknownRows(.unknown) + unknownRows(.foundLocalData)

/// Rows of `unknown`, nothing downloaded or data of an earlier launch not opened yet: opening the
/// data settles the state; sync does nothing.
private func unknownRows(_ s: Situation) -> [Row] {
    [
        Row(s, .localDataOpened(hasLocalChanges: false), .clean, []),
        Row(s, .localDataOpened(hasLocalChanges: true), .dirty, [.scheduleAutomaticSync(after: oneSecond)]),
        Row(s, .migrationNeeded(.content), .needsContentMigration, []),
        Row(s, .migrationNeeded(.databaseReset), .resettingForDatabaseMigration, [.performMigration(.databaseReset)]),
        Row(s, .migrationStarted(.content), .unknown, [.refuse(.notDownloaded)]),
        Row(s, .startListening, .unknown, []),
    ]
}

private let specificRows: [Row] = [
    // unknown: a download starts; data of an earlier launch is opened (and the state determined)
    // only when a document is asked for, and cannot be downloaded again.
    Row(.unknown, .downloadRequested, .unknown, [.startDownload]),
    Row(.unknown, .localDataFound, .unknown, []),
    Row(.foundLocalData, .localDataRequested, .unknown, [.openLocalData]),
    Row(.foundLocalData, .downloadRequested, .unknown, [.refuse(.alreadyDownloaded)]),

    // downloading: a second request starts nothing; the outcome is announced.
    Row(.downloading, .migrationStarted(.content), .unknown, [.refuse(.notDownloaded)]),
    Row(.downloading, .downloadFinished, .clean, [.post(.didFinishDownload)]),
    Row(
        .downloading, .downloadFailed(networkError), .unknown,
        [.invalidateDocuments, .post(.didFailDownload(networkError))]),
    Row(
        .downloading, .downloadCancelled, .unknown,
        [.cancelDownload, .invalidateDocuments, .post(.didFailDownload(.cancelled))]),

    // Content migration.
    Row(.needsContentMigration, .migrationStarted(.content), .migratingContent, [.performMigration(.content)]),
    Row(
        .needsContentMigration, .syncRequested(.manual), .needsContentMigration,
        [.post(.didFailSyncing(.contentMigrationNeeded))]),
    Row(.migratingContent, .migrationStarted(.content), .migratingContent, [.refuse(.performingContentMigration)]),
    Row(.migratingContent, .migrationFinished(.content, hasLocalChanges: false), .clean, []),
    Row(.migratingContent, .migrationFailed(.content, rejection), .needsContentMigration, []),

    // Reset for the database migration: it syncs, so network failures are retried.
    Row(
        .needsReset, .migrationStarted(.databaseReset), .resettingForDatabaseMigration,
        [.performMigration(.databaseReset)]),
    Row(.needsReset, .syncRequested(.manual), .resettingForDatabaseMigration, [.performMigration(.databaseReset)]),
    Row(.resetting, .migrationFinished(.databaseReset, hasLocalChanges: false), .clean, []),
    Row(
        .resetting, .migrationFailed(.databaseReset, networkError), .needsResetForDatabaseMigration,
        [.post(.didFailSyncing(networkError)), .scheduleRetry(after: firstRetry)]),

    // clean: an edit makes it dirty and arms the automatic sync; a sync fetches.
    Row(.clean, .localChangeCommitted, .dirty, [.scheduleAutomaticSync(after: oneSecond)]),
    Row(.clean, .syncRequested(.manual), .receivingChanges, [.post(.didBeginSyncing), .fetchChanges]),
    Row(.clean, .startListening, .receivingChanges, [.startListening, .post(.didBeginSyncing), .fetchChanges]),

    // dirty: every edit restarts the timer; a sync sends.
    Row(.dirty, .localChangeCommitted, .dirty, [.scheduleAutomaticSync(after: oneSecond)]),
    Row(
        .dirty, .syncRequested(.manual), .sendingChanges, [.cancelAutomaticSync, .post(.didBeginSyncing), .sendChanges]),
    Row(.dirty, .syncRequested(.localChangesDelayElapsed), .sendingChanges, [.post(.didBeginSyncing), .sendChanges]),
    Row(
        .dirty, .startListening, .sendingChanges,
        [.startListening, .cancelAutomaticSync, .post(.didBeginSyncing), .sendChanges]),
    Row(.dirty, .delayChanged(.disabled), .dirty, [.cancelAutomaticSync]),
    Row(.dirty, .delayChanged(.after(.seconds(5))), .dirty, [.scheduleAutomaticSync(after: .seconds(5))]),

    // sending: the response moves the cycle to receiving.
    Row(
        .sending, .responseReceived, .receivingChanges,
        [.post(.syncCycleDidChangeState(.receivingChanges)), .applyResponse]),

    // fetching: edits wait for the cycle; the response is applied.
    Row(.fetching, .localChangeCommitted, .receivingChanges, []),
    Row(.fetching, .responseReceived, .receivingChanges, [.applyResponse]),

    // applying: clean when nothing is left, back to sending when edits accumulated.
    Row(.applying, .responseApplied(hasLocalChanges: false), .clean, [.post(.didFinishSyncing)]),
    Row(
        .applying, .responseApplied(hasLocalChanges: true), .sendingChanges,
        [.post(.syncCycleDidChangeState(.sendingChanges)), .sendChanges]),

    // invalid: only removing the local storage helps.
    Row(.invalid, .localStorageRemoved, .unknown, [.invalidateDocuments]),
    Row(.invalid, .downloadRequested, .invalid, [.refuse(.documentInvalidated)]),
    Row(.invalid, .migrationStarted(.content), .invalid, [.refuse(.documentInvalidated)]),
    Row(.invalid, .reauthenticationSucceeded, .invalid, [.refuse(.documentInvalidated)]),
    Row(.invalid, .reauthenticationFailed(mismatch), .invalid, [.refuse(.documentInvalidated)]),

    // After a refused token nothing syncs until reauthentication, which starts a new cycle.
    Row(.cleanAwaitingReauthentication, .localChangeCommitted, .dirty, []),
    Row(.cleanAwaitingReauthentication, .syncRequested(.manual), .clean, [.post(.didFailAuthentication)]),
    Row(
        .cleanAwaitingReauthentication, .reauthenticationSucceeded, .receivingChanges,
        [.post(.didFinishReauthentication), .post(.didBeginSyncing), .fetchChanges]),
    Row(.cleanAwaitingReauthentication, .startListening, .clean, []),

    // A pending retry: the timer, an edit or a manual sync each lead to a new attempt.
    Row(.dirtyWithRetryPending, .localChangeCommitted, .dirty, [.scheduleAutomaticSync(after: oneSecond)]),
    Row(
        .dirtyWithRetryPending, .syncRequested(.manual), .sendingChanges,
        [.cancelRetry, .post(.didBeginSyncing), .sendChanges]),
    Row(
        .dirtyWithRetryPending, .syncRequested(.retryDelayElapsed), .sendingChanges,
        [.post(.didBeginSyncing), .sendChanges]),
    Row(.dirtyWithRetryPending, .stopSyncing(cancelCurrentRequest: false), .dirty, [.cancelRetry]),
    Row(.dirtyWithRetryPending, .stopSyncing(cancelCurrentRequest: true), .dirty, [.cancelRetry]),
    Row(
        .dirtyWithRetryPending, .startListening, .sendingChanges,
        [.startListening, .cancelRetry, .post(.didBeginSyncing), .sendChanges]),
    Row(
        .dirtyWithRetryPending, .delayChanged(.after(.seconds(5))), .dirty, [.scheduleAutomaticSync(after: .seconds(5))]
    ),

    // Listening: a poke starts a cycle at once; failures other than network ones end listening.
    Row(.cleanListening, .localChangeCommitted, .dirty, [.scheduleAutomaticSync(after: oneSecond)]),
    Row(.cleanListening, .syncRequested(.manual), .receivingChanges, [.post(.didBeginSyncing), .fetchChanges]),
    Row(
        .cleanListening, .syncRequested(.serverPoke), .receivingChanges,
        [.post(.didBeginSyncing), .fetchAnnouncedChanges]),
    // A dropped connection is announced; the listener reconnects by itself after network failures.
    Row(.cleanListening, .listeningFailed(networkError), .clean, [.post(.didFailListening(networkError))]),
    Row(
        .cleanListening, .listeningFailed(.authenticationFailed), .clean,
        [.stopListening, .post(.didFailAuthentication)]),
    Row(.cleanListening, .listeningFailed(rejection), .clean, [.stopListening, .post(.didFailListening(rejection))]),
    Row(.cleanListening, .stopListening, .clean, [.stopListening]),
]

/// Events that change a setting: when ignored they may still record it.
private func isSetting(_ event: DocumentStateMachine.Event) -> Bool {
    switch event {
    case .startListening, .stopListening, .delayChanged: true
    default: false
    }
}

@Suite("Document state machine: the transition table", .timeLimit(.minutes(10)))
struct DocumentStateMachineTransitionTableTests {
    @Test("Each situation is reached in the state the table assumes", arguments: Situation.allCases)
    func situationsReachTheirStates(situation: Situation) {
        #expect(situation.machine().state == situation.state)
    }

    @Test("The table has one row per pair and only known events")
    func tableIsWellFormed() {
        var seen = Set<String>()
        for row in transitionTable {
            #expect(allEvents.contains(row.event), "unknown event \(row.event)")
            let key = "\(row.situation) \(row.event)"
            #expect(seen.insert(key).inserted, "duplicate row \(key)")
        }
    }

    @Test("Every event in every situation gives the table's state and actions", arguments: Situation.allCases)
    func everyEventInEverySituation(situation: Situation) {
        let start = situation.machine()
        for event in allEvents {
            var machine = start
            let actions = machine.handle(event)
            if let row = transitionTable.first(where: { $0.situation == situation && $0.event == event }) {
                #expect(machine.state == row.state, "\(situation) + \(event)")
                #expect(actions == row.actions, "\(situation) + \(event)")
            } else {
                #expect(machine.state == situation.state, "\(situation) + \(event) should be ignored")
                #expect(actions.isEmpty, "\(situation) + \(event) should be ignored")
                if !isSetting(event) {
                    #expect(machine == start, "\(situation) + \(event) should leave the machine untouched")
                }
            }
        }
    }
}
