import NIOCore
import NIOPosix

/// Where work that grows with a large input runs: parsing a sync body of megabytes, checking its
/// thousands of changes, writing thousands of records into an answer, hashing an attachment.
///
/// Work on at least ``threshold`` bytes runs on NIO's pool of threads for blocking work, not on the
/// event loop of its connection, which meanwhile goes on answering its other connections
/// (`/healthcheck`, listeners, small syncs). Smaller work runs where it is called: a switch of
/// threads would cost more than the work. docs/SECURITY.md, "Limits", says what runs where.
enum LargeWork {
    /// The bytes from which work leaves the event loop: about 2 ms of parsing and checking JSON on
    /// the project's machine.
    static let threshold = 128 * 1024

    /// Runs `work`, on `bytes` bytes of input, on the blocking pool when they reach ``threshold``,
    /// else here.
    static func run<Value: Sendable>(bytes: Int, _ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        guard bytes >= threshold else { return try work() }
        return try await NIOThreadPool.singleton.runIfActive(work)
    }
}
