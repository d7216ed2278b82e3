import Testing

@testable import Instant

/// Feeds events one by one and keeps every action, so scenarios can check what was asked for.
private struct Driver {
    var machine: DocumentStateMachine
    var log: [DocumentStateMachine.Action] = []

    init(_ machine: DocumentStateMachine = DocumentStateMachine(randomNumberGenerator: SplitMix64(seed: 7))) {
        self.machine = machine
    }

    @discardableResult
    mutating func send(_ event: DocumentStateMachine.Event) -> [DocumentStateMachine.Action] {
        let actions = machine.handle(event)
        log += actions
        return actions
    }

    /// The notifications posted so far, in order.
    var notifications: [InstantDescriptorEvent] {
        log.compactMap { if case .post(let notification) = $0 { notification } else { nil } }
    }

    var state: InstantDocumentState { machine.state }
}

private let networkError = InstantError(.couldNotReachServer, "The connection was lost.")

@Suite("Document state machine: scenarios", .timeLimit(.minutes(10)))
struct DocumentStateMachineScenarioTests {
    @Test("A cycle with edits made while sending sends again, then ends clean")
    func cycleWithChangesDuringSending() {
        var driver = Driver()
        driver.send(.localDataOpened(hasLocalChanges: false))
        #expect(driver.send(.localChangeCommitted) == [.scheduleAutomaticSync(after: .seconds(1))])
        #expect(driver.send(.syncRequested(.localChangesDelayElapsed)) == [.post(.didBeginSyncing), .sendChanges])
        #expect(driver.state == .sendingChanges)

        // An edit while the push is in flight waits for the cycle instead of arming the timer.
        #expect(driver.send(.localChangeCommitted).isEmpty)
        driver.send(.responseReceived)
        #expect(driver.state == .receivingChanges)
        #expect(driver.send(.responseApplied(hasLocalChanges: true)).last == .sendChanges)
        #expect(driver.state == .sendingChanges)
        driver.send(.responseReceived)
        driver.send(.responseApplied(hasLocalChanges: false))

        #expect(driver.state == .clean)
        #expect(
            driver.notifications == [
                .didBeginSyncing, .syncCycleDidChangeState(.receivingChanges),
                .syncCycleDidChangeState(.sendingChanges), .syncCycleDidChangeState(.receivingChanges),
                .didFinishSyncing,
            ])
        #expect(driver.log.filter { $0 == .sendChanges }.count == 2)
        #expect(driver.machine.cycle == nil)
    }

    @Test("A dropped listening connection is announced once, however many reconnections fail, and its return too")
    func droppedListeningConnection() {
        var driver = Driver()
        driver.send(.localDataOpened(hasLocalChanges: false))
        driver.send(.startListening)
        driver.send(.responseReceived)
        driver.send(.responseApplied(hasLocalChanges: false))
        #expect(driver.send(.listeningFailed(networkError)) == [.post(.didFailListening(networkError))])
        for _ in 0..<5 { #expect(driver.send(.listeningFailed(networkError)).isEmpty) }
        #expect(driver.machine.isListening, "the listener keeps trying")
        #expect(driver.send(.listeningResumed) == [.post(.didResumeListening)])
        #expect(driver.send(.listeningResumed).isEmpty)
        // Lost again, then closed by the app: a later connection starts afresh.
        driver.send(.listeningFailed(networkError))
        #expect(driver.send(.stopListening) == [.stopListening])
        #expect(!driver.machine.listeningConnectionLost)
        #expect(driver.send(.listeningFailed(networkError)).isEmpty, "a closed channel reports nothing")
    }

    @Test("Local data of an earlier launch is opened when first asked for, once")
    func localDataOpenedOnFirstRequest() {
        var driver = Driver()
        driver.send(.localDataFound)
        #expect(driver.state == .unknown)
        #expect(driver.machine.isDownloaded)
        #expect(driver.send(.localDataRequested) == [.openLocalData])
        #expect(driver.send(.localDataRequested).isEmpty, "opening is under way")
        #expect(driver.machine.isDownloaded)
        #expect(driver.send(.localDataOpened(hasLocalChanges: true)) == [.scheduleAutomaticSync(after: .seconds(1))])
        #expect(driver.state == .dirty)
        #expect(driver.send(.localDataRequested).isEmpty)
    }

    @Test("A cycle without local changes only fetches")
    func fetchOnlyCycle() {
        var driver = Driver()
        driver.send(.localDataOpened(hasLocalChanges: false))
        #expect(driver.send(.syncRequested(.manual)) == [.post(.didBeginSyncing), .fetchChanges])
        #expect(driver.state == .receivingChanges)
        #expect(driver.send(.responseReceived) == [.applyResponse])
        #expect(driver.send(.responseApplied(hasLocalChanges: false)) == [.post(.didFinishSyncing)])
        #expect(driver.state == .clean)
        #expect(!driver.log.contains(.sendChanges))
    }

    @Test("Network failures are retried with growing, jittered, capped delays, without end")
    func networkFailureBackoffAndRetry() {
        let policy = RetryPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(8))
        var driver = Driver(DocumentStateMachine(retryPolicy: policy, randomNumberGenerator: SplitMix64(seed: 42)))
        driver.send(.localDataOpened(hasLocalChanges: true))
        driver.send(.syncRequested(.manual))

        // An outage of any length: 200 failures in a row, each followed by a retry no later than
        // the cap, so the first attempt after the server is back comes at most 8 s after it.
        var delays: [Duration] = []
        var waited = Duration.zero
        for attempt in 1...200 {
            let actions = driver.send(.requestFailed(networkError))
            #expect(driver.state == .dirty, "a failed push falls back to dirty")
            #expect(actions.first == .post(.didFailSyncing(networkError)))
            guard case .scheduleRetry(let delay) = actions.last else {
                Issue.record("attempt \(attempt) was not retried: \(actions)")
                return
            }
            let ceiling = policy.ceilingDelay(beforeAttempt: attempt)
            #expect(delay >= ceiling / 2 && delay <= ceiling, "attempt \(attempt): \(delay) outside jitter range")
            delays.append(delay)
            waited += delay
            #expect(driver.send(.syncRequested(.retryDelayElapsed)) == [.post(.didBeginSyncing), .sendChanges])
        }
        #expect(delays[3] > delays[0], "delays grow")
        #expect(delays.allSatisfy { $0 <= .seconds(8) }, "the delay is capped")
        #expect(waited > .seconds(600), "the retries spanned an outage of over ten minutes")

        // The server is back: the retry succeeds and the count starts again.
        driver.send(.responseReceived)
        driver.send(.responseApplied(hasLocalChanges: false))
        #expect(driver.state == .clean)
        #expect(driver.machine.consecutiveFailures == 0)
    }

    @Test("A failed database reset backs off like a failed sync")
    func failedDatabaseResetBacksOff() {
        let policy = RetryPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(64))
        var driver = Driver(DocumentStateMachine(retryPolicy: policy, randomNumberGenerator: SplitMix64(seed: 7)))
        #expect(driver.send(.migrationNeeded(.databaseReset)) == [.performMigration(.databaseReset)])
        var ceilings: [Duration] = []
        for attempt in 1...8 {
            let actions = driver.send(.migrationFailed(.databaseReset, networkError))
            guard case .scheduleRetry(let delay) = actions.last else {
                Issue.record("attempt \(attempt) was not retried: \(actions)")
                return
            }
            let ceiling = policy.ceilingDelay(beforeAttempt: attempt)
            #expect(delay >= ceiling / 2 && delay <= ceiling, "attempt \(attempt): \(delay) outside jitter range")
            ceilings.append(ceiling)
            #expect(driver.send(.syncRequested(.retryDelayElapsed)).contains(.performMigration(.databaseReset)))
        }
        #expect(driver.machine.consecutiveFailures == 8)
        #expect(ceilings.last == .seconds(64), "the delay grew with each failure")
    }

    @Test("The same seed gives the same retry delays; the jitter comes from the injected source")
    func jitterComesFromTheInjectedSource() {
        func firstDelay(_ generator: some RandomNumberGenerator & Sendable) -> [DocumentStateMachine.Action] {
            var machine = DocumentStateMachine(randomNumberGenerator: generator)
            _ = machine.handle(.localDataOpened(hasLocalChanges: false))
            _ = machine.handle(.syncRequested(.manual))
            return machine.handle(.requestFailed(networkError))
        }
        #expect(firstDelay(SplitMix64(seed: 1)) == firstDelay(SplitMix64(seed: 1)))
        #expect(firstDelay(ConstantRandomNumberGenerator(value: 0)).last == .scheduleRetry(after: .milliseconds(500)))
        guard case .scheduleRetry(let longest) = firstDelay(ConstantRandomNumberGenerator(value: .max)).last else {
            Issue.record("no retry scheduled")
            return
        }
        #expect(longest > .milliseconds(999) && longest <= .seconds(1))
    }

    @Test("After an authentication failure nothing syncs until reauthentication, which starts a sync")
    func authenticationFailureWaitsForReauthentication() {
        var driver = Driver()
        driver.send(.localDataOpened(hasLocalChanges: true))
        driver.send(.startListening)
        #expect(driver.state == .sendingChanges)

        let failure = driver.send(.requestFailed(.authenticationFailed))
        #expect(failure == [.stopListening, .post(.didFailAuthentication)], "no retry is scheduled")
        #expect(driver.state == .dirty)
        #expect(!driver.notifications.contains(.didFailSyncing(.authenticationFailed)))

        // Edits, timers, pokes and manual syncs do not reach the server.
        #expect(driver.send(.localChangeCommitted).isEmpty)
        #expect(driver.send(.syncRequested(.serverPoke)).isEmpty)
        #expect(driver.send(.syncRequested(.retryDelayElapsed)).isEmpty)
        #expect(driver.send(.syncRequested(.manual)) == [.post(.didFailAuthentication)])
        #expect(
            driver.send(.reauthenticationFailed(.invalidJWT("expired"))) == [
                .post(.didFailReauthentication(.invalidJWT("expired")))
            ])
        #expect(driver.state == .dirty)

        // A successful reauthentication reopens the channel and sends the pending changes.
        #expect(
            driver.send(.reauthenticationSucceeded) == [
                .post(.didFinishReauthentication), .startListening, .post(.didBeginSyncing), .sendChanges,
            ])
        #expect(driver.state == .sendingChanges)
        #expect(!driver.log.contains { if case .scheduleRetry = $0 { true } else { false } })
    }

    @Test("Removing local storage during a sync cancels it and returns to unknown")
    func removalReturnsToUnknown() {
        var driver = Driver()
        driver.send(.downloadRequested)
        driver.send(.downloadFinished)
        driver.send(.localChangeCommitted)
        driver.send(.syncRequested(.manual))
        #expect(driver.state == .sendingChanges)

        #expect(
            driver.send(.localStorageRemoved) == [
                .cancelRequest, .post(.didFailSyncing(.cancelled)), .invalidateDocuments,
            ])
        #expect(driver.state == .unknown)
        #expect(!driver.machine.hasLocalChanges)
        // Like a descriptor never downloaded: sync does nothing, a download starts afresh.
        #expect(driver.send(.syncRequested(.manual)).isEmpty)
        #expect(driver.send(.downloadRequested) == [.startDownload])
    }

    @Test("Corruption makes the descriptor invalid until its storage is removed")
    func corruptionInvalidates() {
        var driver = Driver()
        driver.send(.localDataOpened(hasLocalChanges: true))
        #expect(driver.send(.corruptionDetected) == [.cancelAutomaticSync, .invalidateDocuments])
        #expect(driver.state == .invalid)
        #expect(driver.send(.syncRequested(.manual)).isEmpty)
        #expect(driver.send(.localChangeCommitted).isEmpty)
        #expect(driver.send(.downloadRequested) == [.refuse(.documentInvalidated)])
        driver.send(.localStorageRemoved)
        #expect(driver.state == .unknown)
        #expect(driver.send(.downloadRequested) == [.startDownload])
    }

    @Test("With the disabled sentinel, edits never start a sync on their own")
    func disabledDelayMeansNoAutomaticSync() throws {
        let delay = try AutomaticSyncDelay(timeInterval: .instantSyncingLocalChangesDisabled)
        #expect(delay == .disabled)
        var driver = Driver(DocumentStateMachine(automaticSyncDelay: delay))
        driver.send(.localDataOpened(hasLocalChanges: true))
        for _ in 0..<3 { driver.send(.localChangeCommitted) }
        #expect(driver.state == .dirty)
        #expect(driver.log.isEmpty)
        #expect(driver.send(.syncRequested(.localChangesDelayElapsed)).isEmpty, "a stray timer is ignored")

        // Manual sync still works, and so does a server poke while listening.
        #expect(driver.send(.syncRequested(.manual)) == [.post(.didBeginSyncing), .sendChanges])
        driver.send(.responseReceived)
        driver.send(.responseApplied(hasLocalChanges: false))
        driver.send(.startListening)
        driver.send(.responseReceived)
        driver.send(.responseApplied(hasLocalChanges: false))
        #expect(driver.send(.syncRequested(.serverPoke)) == [.post(.didBeginSyncing), .fetchAnnouncedChanges])
    }

    @Test("Enabling automatic sync again arms the timer for pending changes")
    func reenablingTheDelay() {
        var driver = Driver(DocumentStateMachine(automaticSyncDelay: .disabled))
        driver.send(.localDataOpened(hasLocalChanges: false))
        driver.send(.localChangeCommitted)
        #expect(driver.send(.delayChanged(.after(.seconds(3)))) == [.scheduleAutomaticSync(after: .seconds(3))])
        #expect(driver.send(.localChangeCommitted) == [.scheduleAutomaticSync(after: .seconds(3))])
    }

    @Test("A server poke during a cycle leads to one more fetch before the cycle ends")
    func pokeDuringCycleFetchesAgain() {
        var driver = Driver()
        driver.send(.localDataOpened(hasLocalChanges: true))
        driver.send(.startListening)
        #expect(driver.send(.syncRequested(.serverPoke)).isEmpty)
        driver.send(.responseReceived)
        #expect(driver.send(.responseApplied(hasLocalChanges: false)) == [.fetchAnnouncedChanges])
        #expect(driver.state == .receivingChanges)
        driver.send(.responseReceived)
        #expect(driver.send(.responseApplied(hasLocalChanges: false)) == [.post(.didFinishSyncing)])
        #expect(driver.state == .clean)
    }

    @Test("While listening, a server poke sends pending changes before the automatic delay elapses")
    func pokeOvertakesTheAutomaticDelay() {
        var driver = Driver()
        driver.send(.localDataOpened(hasLocalChanges: false))
        driver.send(.startListening)
        driver.send(.responseReceived)
        driver.send(.responseApplied(hasLocalChanges: false))
        #expect(driver.send(.localChangeCommitted) == [.scheduleAutomaticSync(after: .seconds(1))])
        #expect(
            driver.send(.syncRequested(.serverPoke)) == [.cancelAutomaticSync, .post(.didBeginSyncing), .sendChanges])
        #expect(driver.state == .sendingChanges)
        #expect(driver.send(.syncRequested(.localChangesDelayElapsed)).isEmpty, "the cancelled timer is stale")
    }

    @Test("Network failures keep listening; other failures end it")
    func listeningAfterFailures() {
        var driver = Driver()
        driver.send(.localDataOpened(hasLocalChanges: false))
        driver.send(.startListening)
        driver.send(.requestFailed(networkError))
        #expect(driver.machine.isListening)
        driver.send(.syncRequested(.retryDelayElapsed))
        #expect(driver.send(.requestFailed(InstantError(.documentNotFound, "gone"))).first == .stopListening)
        #expect(!driver.machine.isListening)
        #expect(driver.send(.syncRequested(.serverPoke)).isEmpty)
    }

    @Test("stopSyncing(false) lets the request finish and ends the cycle, even with changes left")
    func stopAfterCurrentRequest() {
        var driver = Driver()
        driver.send(.localDataOpened(hasLocalChanges: true))
        driver.send(.syncRequested(.manual))
        #expect(driver.send(.stopSyncing(cancelCurrentRequest: false)).isEmpty)
        driver.send(.responseReceived)
        #expect(driver.send(.responseApplied(hasLocalChanges: true)) == [.post(.didFinishSyncing)])
        #expect(driver.state == .dirty)

        // A network failure of a stopped cycle is not retried either.
        driver.send(.syncRequested(.manual))
        driver.send(.stopSyncing(cancelCurrentRequest: false))
        #expect(driver.send(.requestFailed(networkError)) == [.post(.didFailSyncing(networkError))])
    }

    @Test("A download is started once, and listening asked for before it begins after it")
    func downloadThenListen() {
        var driver = Driver()
        #expect(driver.send(.syncRequested(.manual)).isEmpty, "sync does nothing before the download")
        #expect(driver.send(.startListening).isEmpty)
        #expect(driver.send(.downloadRequested) == [.startDownload])
        #expect(driver.send(.downloadRequested).isEmpty, "a second call does not download twice")
        #expect(driver.send(.downloadFinished) == [.post(.didFinishDownload), .startListening])
        #expect(driver.state == .clean)
        #expect(driver.send(.downloadRequested) == [.refuse(.alreadyDownloaded)])
    }

    @Test("A failed download leaves the state unknown and allows another attempt")
    func failedDownload() {
        var driver = Driver()
        driver.send(.downloadRequested)
        #expect(
            driver.send(.downloadFailed(networkError)) == [.invalidateDocuments, .post(.didFailDownload(networkError))])
        #expect(driver.state == .unknown)
        #expect(driver.send(.downloadRequested) == [.startDownload])
    }

    @Test("A database reset refused for authentication resumes after reauthentication")
    func databaseResetAfterReauthentication() {
        var driver = Driver()
        #expect(driver.send(.migrationNeeded(.databaseReset)) == [.performMigration(.databaseReset)])
        #expect(driver.state == .resettingForDatabaseMigration)
        #expect(driver.send(.localChangeCommitted).isEmpty, "editing is disabled during the reset")
        #expect(driver.send(.migrationFailed(.databaseReset, .authenticationFailed)) == [.post(.didFailAuthentication)])
        #expect(driver.state == .needsResetForDatabaseMigration)
        #expect(driver.send(.syncRequested(.manual)) == [.post(.didFailAuthentication)])
        #expect(
            driver.send(.reauthenticationSucceeded) == [
                .post(.didFinishReauthentication), .performMigration(.databaseReset),
            ])
        #expect(driver.send(.migrationFinished(.databaseReset, hasLocalChanges: false)).isEmpty)
        #expect(driver.state == .clean)
    }

    @Test("A content migration runs once and can be retried after failing")
    func contentMigration() {
        var driver = Driver()
        driver.send(.migrationNeeded(.content))
        #expect(driver.send(.syncRequested(.manual)) == [.post(.didFailSyncing(.contentMigrationNeeded))])
        #expect(driver.send(.migrationStarted(.content)) == [.performMigration(.content)])
        #expect(driver.send(.migrationStarted(.content)) == [.refuse(.performingContentMigration)])
        driver.send(.migrationFailed(.content, InstantError(.storageFailed, "disk full")))
        #expect(driver.state == .needsContentMigration)
        driver.send(.migrationStarted(.content))
        #expect(
            driver.send(.migrationFinished(.content, hasLocalChanges: true)) == [
                .scheduleAutomaticSync(after: .seconds(1))
            ])
        #expect(driver.state == .dirty)
    }
}
