import Foundation
import InstantTesting
import Logging
import NIOCore
import NIOEmbedded
import NIOPosix
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
    /// A loop that is not one of the requests' loops (the server's): requests that arrive on it
    /// run on it.
    static let elsewhere = EmbeddedEventLoop()

    @Test func aWaitEndsWithTheLastRequest() async throws {
        let underWay = SyncRequestsUnderWay()
        await underWay.untilNone(waitingAtMost: .seconds(600))  // none runs: at once
        let first = underWay.started(arrivedOn: Self.elsewhere)
        let second = underWay.started(arrivedOn: Self.elsewhere)
        let lastEnded = Mutex(false)
        let waiting = Task {
            await underWay.untilNone(waitingAtMost: .seconds(600))
            return lastEnded.withLock { $0 }
        }
        #expect(try await eventually { underWay.isAwaited })
        underWay.ended(first)
        #expect(underWay.isAwaited, "one request still runs")
        lastEnded.withLock { $0 = true }
        underWay.ended(second)
        #expect(await waiting.value, "the wait ended after the last request, not before")
        #expect(!underWay.isAwaited)
    }

    @Test func aWaitIsBounded() async {
        let underWay = SyncRequestsUnderWay()
        let request = underWay.started(arrivedOn: Self.elsewhere)
        await underWay.untilNone(waitingAtMost: .milliseconds(20))
        #expect(underWay.running == 1, "the time ran out with the request still running")
        #expect(!underWay.isAwaited)
        underWay.ended(request)
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

    /// A request's work runs on its connection's loop unless another loop has fewer requests
    /// running: connections that all landed on one loop share the loops.
    @Test func requestsGoToTheLoopWithFewestRunning() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        defer { try? group.syncShutdownGracefully() }
        let loops = Array(group.makeIterator())
        let (a, b) = (loops[0], loops[1])
        let underWay = SyncRequestsUnderWay(loops: group)
        let first = underWay.started(arrivedOn: a)
        #expect(first.loop === a, "the loops are even: its own")
        let second = underWay.started(arrivedOn: a)
        #expect(second.loop === b, "its own runs one more: the other")
        let third = underWay.started(arrivedOn: a)
        #expect(third.loop === a)
        underWay.ended(first)
        underWay.ended(third)
        let fourth = underWay.started(arrivedOn: b)
        #expect(fourth.loop === a, "its own runs one, the other none")
        let fifth = underWay.started(arrivedOn: b)
        #expect(fifth.loop === b)
        for request in [second, fourth, fifth] { underWay.ended(request) }
        #expect(underWay.running == 0)
        // A request from a loop of another group runs there.
        let outside = underWay.started(arrivedOn: Self.elsewhere)
        #expect(outside.loop == nil && outside.executor == nil)
        underWay.ended(outside)
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
        let request = underWay.started(arrivedOn: Self.elsewhere)
        await group.triggerGracefulShutdown()
        #expect(try await eventually { underWay.isAwaited }, "the shutdown waits for the request")
        underWay.ended(request)
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
