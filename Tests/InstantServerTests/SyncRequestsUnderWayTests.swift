import Foundation
import InstantTesting
import Logging
import NIOCore
import NIOEmbedded
import NIOWebSocket
import ServiceLifecycle
import Synchronization
import Testing

@testable import InstantServer

/// Sync requests that no connection waits for (answered ahead of the router, or sent on a listening
/// WebSocket) are waited for when the server stops, so that the storage does not stop under their
/// commit.
@Suite("Sync requests under way at shutdown", .timeLimit(.minutes(2)))
struct SyncRequestsUnderWayTests {
    @Test func aWaitEndsWithTheLastRequest() async throws {
        let underWay = SyncRequestsUnderWay()
        await underWay.untilNone(waitingAtMost: .seconds(600))  // none runs: at once
        underWay.started()
        underWay.started()
        let lastEnded = Mutex(false)
        let waiting = Task {
            await underWay.untilNone(waitingAtMost: .seconds(600))
            return lastEnded.withLock { $0 }
        }
        #expect(try await eventually { underWay.isAwaited })
        underWay.ended()
        #expect(underWay.isAwaited, "one request still runs")
        lastEnded.withLock { $0 = true }
        underWay.ended()
        #expect(await waiting.value, "the wait ended after the last request, not before")
        #expect(!underWay.isAwaited)
    }

    @Test func aWaitIsBounded() async {
        let underWay = SyncRequestsUnderWay()
        underWay.started()
        await underWay.untilNone(waitingAtMost: .milliseconds(20))
        #expect(underWay.running == 1, "the time ran out with the request still running")
        #expect(!underWay.isAwaited)
        underWay.ended()
        #expect(underWay.running == 0)
    }

    /// A sync request sent on a listening WebSocket counts from the moment the handler reads it
    /// (before the task that answers it runs) until its answer is made.
    @Test func aRequestOnAListeningWebSocketCountsFromItsReadToItsAnswer() async throws {
        let underWay = SyncRequestsUnderWay()
        let (released, release) = AsyncStream<Void>.makeStream()
        let channel = try await ListeningWebSocketHandler.answeringARequest(underWay: underWay) { _, _, _, _ in
            for await _ in released { break }
            return (SyncAnswerBody(ByteBuffer(string: #"{"revision":0}"#)), 0)
        }
        #expect(underWay.running == 1, "counted as it was read, before its task ran")
        release.yield()
        // The listener's presence may go out first.
        var sent: [String] = []
        while !sent.contains(#"{"revision":0}"#), sent.count < 5 {
            sent.append(String(buffer: try await channel.waitForOutboundWrite(as: WebSocketFrame.self).unmaskedData))
        }
        #expect(sent.contains(#"{"revision":0}"#), "\(sent)")
        #expect(underWay.running == 0, "no longer counted once answered")
        try await channel.close()
    }

    @Test func theServersShutdownWaitsForThem() async throws {
        let underWay = SyncRequestsUnderWay()
        // Limits beyond the suite's: the shutdown can end only because the request ended.
        let shutdown = ClientWorkShutdown(
            events: LayerEvents(), syncRequests: underWay, listenersLimit: .seconds(600),
            syncRequestsLimit: .seconds(600))
        let group = ServiceGroup(
            configuration: .init(services: [shutdown], logger: Logger(label: "test.shutdown")))
        let running = Task { try await group.run() }
        underWay.started()
        await group.triggerGracefulShutdown()
        #expect(try await eventually { underWay.isAwaited }, "the shutdown waits for the request")
        underWay.ended()
        try await running.value
    }
}

extension ListeningWebSocketHandler {
    /// A listening WebSocket's handler on a testing channel (user `a` on the default layer of
    /// document `d`) whose sync requests `answer` answers, once its listener is registered and it
    /// has read the sync request `{"requestId":1,…}`.
    static func answeringARequest(
        underWay: SyncRequestsUnderWay = SyncRequestsUnderWay(),
        _ answer:
            @escaping @Sendable (ByteBuffer?, ClientToken, UUID, Logger) async -> (
                text: SyncAnswerBody, revision: Int64?
            )
    ) async throws -> NIOAsyncTestingChannel {
        let (registered, registration) = AsyncStream<Void>.makeStream()
        let endpoint = ListeningEndpoint(
            admit: { _, _ in nil }, events: LayerEvents(),
            storedRevision: { _ in
                // Read once the listener is registered, when sync requests are answered.
                registration.yield()
                return 0
            },
            answer: answer, underWay: underWay, maxMessageSize: 1 << 16, pingInterval: .seconds(3600))
        let session = ListeningSession(
            token: NodeRelayTests.token("a"), layer: .init(documentID: "d", name: ""), since: 0,
            receivesRecords: false)
        let channel = NIOAsyncTestingChannel()
        // Made on the channel's loop, which it is bound to.
        try await channel.eventLoop.submit {
            try channel.pipeline.syncOperations.addHandler(
                ListeningWebSocketHandler(session: session, endpoint: endpoint, logger: Logger(label: "test.socket")))
        }.get()
        for await _ in registered { break }
        let request = ByteBuffer(string: #"{"requestId":1,"clientId":"c","baseRevision":0}"#)
        try await channel.writeInbound(WebSocketFrame(fin: true, opcode: .text, data: request))
        return channel
    }
}
