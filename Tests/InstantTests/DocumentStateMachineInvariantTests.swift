import Testing

@testable import Instant

/// Long random sequences of events (drawn reproducibly from every event of the transition
/// table) must never break the promises the owner and the app rely on.
@Suite("Document state machine: invariants under random event sequences", .timeLimit(.minutes(10)))
struct DocumentStateMachineInvariantTests {
    @Test("The stage and the observable state agree after every event", arguments: 0..<40)
    func invariantsHold(seed: UInt64) {
        var picker = SplitMix64(seed: seed)
        var machine = DocumentStateMachine(randomNumberGenerator: SplitMix64(seed: seed &+ 1000))
        for step in 0..<500 {
            let event = allEvents[Int(picker.next() % UInt64(allEvents.count))]
            let wasSyncing = machine.cycle != nil
            let actions = machine.handle(event)
            let failures = violations(of: machine, after: actions, wasSyncing: wasSyncing)
            if !failures.isEmpty {
                Issue.record("seed \(seed), step \(step), after \(event): \(failures.joined(separator: "; "))")
                return
            }
        }
    }

    @Test("The random sequences reach every state, so the invariants are checked everywhere")
    func walksReachEveryState() {
        var visited = Set<InstantDocumentState>()
        for seed in UInt64(0)..<40 {
            var picker = SplitMix64(seed: seed)
            var machine = DocumentStateMachine(randomNumberGenerator: SplitMix64(seed: seed &+ 1000))
            for _ in 0..<500 {
                _ = machine.handle(allEvents[Int(picker.next() % UInt64(allEvents.count))])
                visited.insert(machine.state)
            }
        }
        #expect(visited == Set(InstantDocumentState.allCases))
    }

    /// The broken promises, if any.
    private func violations(
        of machine: DocumentStateMachine, after actions: [DocumentStateMachine.Action], wasSyncing: Bool
    ) -> [String] {
        var found: [String] = []
        func check(_ condition: Bool, _ promise: String) {
            if !condition { found.append(promise) }
        }
        let state = machine.state
        check(state.isSyncing == (machine.cycle != nil), "a cycle runs exactly in the syncing states")
        if state == .sendingChanges {
            check(machine.cycle?.phase == .awaitingPushResponse, "sendingChanges awaits a push response")
        }
        if state == .receivingChanges {
            check(machine.cycle?.phase != .awaitingPushResponse, "receivingChanges is fetching or applying")
        }
        check(state != .clean || !machine.hasLocalChanges, "clean means no unsynced changes")
        check(state != .dirty || machine.hasLocalChanges, "dirty means unsynced changes")
        check(!machine.isDownloading || state == .unknown, "downloads happen only in unknown")
        check(
            !machine.isListening
                || (machine.wantsServerChanges && state.isOperational && !machine.awaitsReauthentication),
            "the channel is open only when wanted, usable and authenticated")
        check(
            !machine.awaitsReauthentication
                || (machine.cycle == nil && !machine.automaticSyncScheduled && !machine.retryScheduled),
            "nothing syncs or waits to sync while the token is refused")
        check(!machine.automaticSyncScheduled || state == .dirty, "the automatic timer runs only when dirty")
        check(!machine.listeningConnectionLost || machine.isListening, "only an open channel can lose its connection")
        check(
            !machine.retryScheduled || [.clean, .dirty, .needsResetForDatabaseMigration].contains(state),
            "retries wait only at rest")

        let posted = actions.compactMap { if case .post(let notification) = $0 { notification } else { nil } }
        let ends = posted.filter {
            switch $0 {
            case .didFinishSyncing, .didFailSyncing, .didFailAuthentication: true
            default: false
            }
        }
        if !wasSyncing, machine.cycle != nil {
            check(posted.contains(.didBeginSyncing), "a starting cycle is announced")
            check(
                actions.contains(.sendChanges) || actions.contains(.fetchChanges)
                    || actions.contains(.fetchAnnouncedChanges), "a starting cycle fetches or sends")
        }
        if wasSyncing, machine.cycle == nil {
            check(ends.count == 1, "an ending cycle is announced exactly once")
        }
        if wasSyncing, machine.cycle != nil {
            check(!posted.contains(.didBeginSyncing) && ends.isEmpty, "a running cycle neither begins nor ends")
        }
        for action in actions {
            if case .scheduleRetry(let delay) = action {
                check(delay <= machine.retryPolicy.maximumDelay, "retry delays are bounded")
            }
        }
        return found
    }
}
