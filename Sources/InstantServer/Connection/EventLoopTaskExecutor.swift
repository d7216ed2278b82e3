import NIOCore
import NIOPosix

/// A task executor that runs jobs on one event loop.
///
/// A request's handler (``EventLoopPreferenceMiddleware``) prefers its connection's loop, and a
/// sync request (over HTTP or on a listening WebSocket) the loop ``SyncRequestsUnderWay`` chooses,
/// most often its connection's: whichever thread wakes them (a group of commits' delivery), they go
/// on there, and their answer is written to the connection without another switch between threads
/// (with one back to the connection's loop, when the loops were out of balance). Swift's global executor (the server's event loops, see
/// `InstantCommand`) would resume them on the loop they were woken from instead: a group's
/// delivery wakes all its handlers from one loop, which then made every answer of the group.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// The executor of the event loop the caller runs on, or `nil` off the loops.
    static var current: EventLoopTaskExecutor? {
        MultiThreadedEventLoopGroup.currentEventLoop.map(EventLoopTaskExecutor.init)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
