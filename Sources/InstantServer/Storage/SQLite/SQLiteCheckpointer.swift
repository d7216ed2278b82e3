import Dispatch
import GRDB
import NIOCore
import Synchronization

/// Copies a database's write-ahead log into the database file on a connection of its own, beside
/// the writer.
///
/// SQLite's automatic checkpoint runs inside the commit that leaves a thousand pages in the log:
/// that commit copies them and syncs the database file before it returns, and the writer's next
/// transaction (in a layer's group commits, every push behind it) waits for it. Here, a commit
/// asks for a passive checkpoint ``delay`` later, unless one is asked for already (a commit during
/// a checkpoint asks for the next, which starts when it ends); it runs on a background queue while
/// the writer goes on, and so do readers. One that fails, or cannot copy everything because a
/// reader still uses the log, leaves the rest to the next.
///
/// The log starts again from its beginning only when a write begins with all of it copied, which a
/// writer that never pauses may not give a checkpoint beside it. So the backend keeps SQLite's own
/// checkpoint for a log that reaches ``writerCheckpointPages`` pages: that commit copies what is
/// left, and the log starts again.
final class SQLiteCheckpointer: Sendable {
    /// How long after a commit its checkpoint runs: the commits meanwhile share it. Every commit
    /// writes the pages at the end of the records' indexes again, and every checkpoint copies
    /// them: at 10 ms, under a stream of pushes, the checkpoints took twice the processor time they
    /// take at 100 ms (docs/BENCHMARKS.md).
    static let delay = TimeAmount.milliseconds(100)
    /// The log's pages from which a commit checkpoints itself (SQLite's `wal_autocheckpoint`): 16 MiB
    /// in pages of 4 KiB, where SQLite's default is 1,000 pages.
    static let writerCheckpointPages = 4_000

    private let connection: DatabaseQueue
    private let loop: any EventLoop
    private let state = Mutex(State.idle)
    private let checkpoints = Atomic<Int>(0)

    /// Where the checkpoints stand.
    private enum State {
        /// None is asked for.
        case idle
        /// One is asked for and has not started: it will copy what commits write until then.
        case scheduled
        /// One runs; `askedAgain` when a commit came after it started, whose pages it may miss.
        case running(askedAgain: Bool)
    }

    /// Opens the checkpoints' connection to the database at `path`, which is in WAL mode; `loop`
    /// times them.
    init(path: String, timingOn loop: any EventLoop) throws {
        connection = try DatabaseQueue(path: path)
        self.loop = loop
    }

    /// How many checkpoints ran.
    var checkpointCount: Int { checkpoints.load(ordering: .relaxed) }

    /// A write transaction committed: a checkpoint copies its pages ``delay`` later at most, or
    /// once the one running ends.
    func committed() {
        let schedules = state.withLock { state in
            switch state {
            case .idle:
                state = .scheduled
                return true
            case .scheduled, .running(askedAgain: true):
                return false
            case .running(askedAgain: false):
                state = .running(askedAgain: true)
                return false
            }
        }
        if schedules { schedule() }
    }

    private func schedule() {
        loop.scheduleTask(in: Self.delay) {
            DispatchQueue.global(qos: .utility).async { self.checkpoint() }
        }
    }

    private func checkpoint() {
        state.withLock { $0 = .running(askedAgain: false) }
        // A failure leaves the pages in the log, for the next checkpoint.
        _ = try? connection.writeWithoutTransaction { try $0.checkpoint(.passive) }
        checkpoints.add(1, ordering: .relaxed)
        let again = state.withLock { state in
            guard case .running(askedAgain: true) = state else {
                state = .idle
                return false
            }
            state = .scheduled
            return true
        }
        if again { schedule() }
    }
}
