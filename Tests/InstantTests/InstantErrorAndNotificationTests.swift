import Foundation
import Testing

@testable import Instant

@Suite("Errors and notifications", .timeLimit(.minutes(10)))
struct InstantErrorAndNotificationTests {
    @Test("Codes compare by raw value, so new codes can be added without breaking matching")
    func codesAreExtensible() {
        #expect(InstantError.Code(rawValue: "invalidJWT") == .invalidJWT)
        #expect(InstantError.Code(rawValue: "somethingNew") != .invalidJWT)
        #expect(InstantError.alreadyDownloaded.code == .alreadyDownloaded)
        #expect(InstantError.notDownloaded.code == .notDownloaded)
        #expect(InstantError.authenticationFailed.code == .authenticationFailed)
    }

    @Test("Messages say what happened and what to do")
    func messagesAreHelpful() {
        let mismatch = InstantError.userIDMismatch(expected: "alice", found: nil)
        #expect(mismatch.message.contains("alice"))
        #expect(mismatch.message.contains("removeLocalStorage()"))
        #expect(InstantError.authenticationFailed.message.contains("reauthenticate(withJWT:)"))
        #expect(InstantError.invalidJWT("no document_id claim").message.contains("no document_id claim"))
        #expect(InstantError.corruptedData.localizedDescription == InstantError.corruptedData.message)
        #expect(String(describing: InstantError.cancelled).hasPrefix("InstantError.cancelled:"))
    }

    @Test("Only network and server-availability failures are retryable")
    func retryability() {
        #expect(InstantError(.couldNotReachServer, "offline").isRetryable)
        #expect(InstantError(.serverUnavailable, "503").isRetryable)
        #expect(!InstantError.authenticationFailed.isRetryable)
        #expect(!InstantError(.accessDenied, "read only").isRetryable)
    }

    @Test("Each notification has its own name and carries its payload in userInfo")
    func notificationNamesAndUserInfo() {
        let error = InstantError(.couldNotReachServer, "offline")
        let all: [InstantDescriptorEvent] = [
            .didBeginSyncing, .syncCycleDidChangeState(.sendingChanges), .didFinishSyncing, .didFailSyncing(error),
            .didFailAuthentication, .didFinishDownload, .didFailDownload(error), .didFinishReauthentication,
            .didFailReauthentication(error), .didFailListening(error), .didResumeListening,
        ]
        #expect(Set(all.map(\.name)).count == all.count)
        #expect(
            InstantDescriptorEvent.didFailListening(error).userInfo()[InstantNotificationKey.error] as? InstantError
                == error)
        #expect(
            InstantDescriptorEvent.didFailSyncing(error).userInfo()[InstantNotificationKey.error] as? InstantError
                == error)
        #expect(
            InstantDescriptorEvent.syncCycleDidChangeState(.receivingChanges).userInfo()[
                InstantNotificationKey.documentState]
                as? InstantDocumentState == .receivingChanges)
        #expect(
            InstantDescriptorEvent.didFinishReauthentication.userInfo(jwt: "a.b.c")[InstantNotificationKey.jwt]
                as? String == "a.b.c")
        #expect(InstantDescriptorEvent.didBeginSyncing.userInfo().isEmpty)
    }

    @Test("States have stable raw values and readable names")
    func stateRawValues() {
        #expect(InstantDocumentState.allCases.map(\.rawValue) == Array(0...9))
        #expect(InstantDocumentState(rawValue: 5) == .clean)
        #expect(InstantDocumentState(rawValue: 42) == nil)
        #expect(InstantDocumentState.receivingChanges.description == "receivingChanges")
        #expect(InstantDocumentState.allCases.filter(\.isSyncing) == [.sendingChanges, .receivingChanges])
        #expect(
            InstantDocumentState.allCases.filter(\.isOperational) == [
                .clean, .dirty, .sendingChanges, .receivingChanges,
            ])
    }
}
