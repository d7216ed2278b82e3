import Foundation
import InstantServer
import InstantTesting
import Testing

@testable import Instant

/// Awaiting a download, a sync cycle and a reauthentication, beside the notifications.
@Suite("Awaiting the descriptor", .timeLimit(.minutes(10)))
struct AsyncDescriptorTests {
    @Test func aDownloadASyncAndAReauthenticationCanBeAwaited() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let client = try server.client("async")
        let jwt = try await server.token(tokenID: "session-1")
        let descriptor = try client.documentDescriptor(forJWT: jwt)
        await #expect {
            try await descriptor.syncAndWait()
        } throws: { ($0 as? InstantError)?.code == .notDownloaded }

        try await descriptor.downloadAndWait(usingJWT: jwt)
        #expect(descriptor.documentState == .clean)
        try descriptor.setDelayForSyncingLocalChanges(.instantSyncingLocalChangesDisabled)
        try descriptor.editableDocument.add(try note(text: "awaited"))
        #expect(descriptor.documentState == .dirty)
        try await descriptor.syncAndWait()
        #expect(descriptor.documentState == .clean)
        #expect(try await server.serverAnnotations().count == 1)

        // A revoked token fails the cycle with authenticationFailed; a new one is awaited.
        try await server.revoke(jwt)
        try descriptor.editableDocument.add(try note(text: "after revocation"))
        await #expect {
            try await descriptor.syncAndWait()
        } throws: { ($0 as? InstantError)?.code == .authenticationFailed }
        try await descriptor.reauthenticateAndWait(withJWT: try await server.token())
        try await descriptor.syncAndWait()
        #expect(try await server.serverAnnotations().count == 2)
        await server.stop()
    }

    @Test func aFailedDownloadThrowsItsError() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let client = try server.client("async-fail")
        // A document the server does not have.
        let jwt = try await server.key.token(
            ClientClaims(
                documentID: "missing", permissions: ["read-document", "write", "download"], userID: "alice",
                expiration: Date().addingTimeInterval(3600)))
        let descriptor = try client.documentDescriptor(forJWT: jwt)
        await #expect {
            try await descriptor.downloadAndWait(usingJWT: jwt)
        } throws: { ($0 as? InstantError)?.code == .documentNotFound }
        await server.stop()
    }

    @Test func waitingEndsWhenTheTaskIsCancelled() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        let client = try server.client("async-cancel")
        let jwt = try await server.token()
        let descriptor = try client.documentDescriptor(forJWT: jwt)
        try await descriptor.downloadAndWait(usingJWT: jwt)
        // The server stops: the sync cycle can only fail, after retries; the waiter is cancelled
        // before that.
        await server.stop()
        try descriptor.editableDocument.add(try note(text: "offline"))
        let waiting = Task { try await descriptor.syncAndWait() }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }
}
