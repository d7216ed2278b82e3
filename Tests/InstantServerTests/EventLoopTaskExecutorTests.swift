import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import InstantServer

/// A request's handler prefers its connection's event loop: whichever thread wakes it (its group
/// of commits' delivery), it goes on there, and writes its answer without another switch.
@Suite("Event loop task executor", .timeLimit(.minutes(10)))
struct EventLoopTaskExecutorTests {
    @Test func aTaskThatPrefersALoopRunsAndResumesOnIt() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let executor = EventLoopTaskExecutor(loop)
        let (startedOnLoop, resumedOnLoop) = await withTaskExecutorPreference(executor) {
            let started = loop.inEventLoop
            // Woken from another thread, as a group's delivery wakes a handler.
            await withCheckedContinuation { continuation in Thread.detachNewThread { continuation.resume() } }
            return (started, loop.inEventLoop)
        }
        #expect(startedOnLoop)
        #expect(resumedOnLoop)

        let unstructured = await Task(executorPreference: executor) { () async -> Bool in
            await withCheckedContinuation { continuation in Thread.detachNewThread { continuation.resume() } }
            return loop.inEventLoop
        }.value
        #expect(unstructured)
    }
}
