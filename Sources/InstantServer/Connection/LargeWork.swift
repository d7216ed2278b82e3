import NIOCore
import NIOPosix

/// Where work that grows with a large input runs: parsing a sync body of megabytes, checking its
/// thousands of changes, writing thousands of records into an answer, hashing an attachment.
///
/// Work on at least ``threshold`` bytes (``writingThreshold`` for writing stored records as JSON)
/// runs on NIO's pool of threads for blocking work, not on the event loop of its connection, which
/// meanwhile goes on answering its other connections (`/healthcheck`, listeners, small syncs).
/// Smaller work runs where it is called: a switch of threads would cost more than the work.
/// docs/SECURITY.md, "Limits", says what runs where.
enum LargeWork {
    /// The bytes from which work leaves the event loop: about 2 ms of parsing and checking JSON on
    /// the project's machine.
    static let threshold = 128 * 1024

    /// The bytes of JSON written from stored records (``StoredRecord/syncJSONSizeEstimate(of:)``)
    /// from which the writing leaves the event loop: writing costs far less a byte than parsing and
    /// checking (the JSON of a group of 360 notes, about 140 KB of contents and 160 bytes a record,
    /// took 0.2 ms in the profile of the throughput benchmark), so this is about 1.5 ms of work.
    static let writingThreshold = 8 * threshold

    /// Runs `work`, on `bytes` bytes of input, on the blocking pool when they reach ``threshold``,
    /// else here.
    static func run<Value: Sendable>(bytes: Int, _ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await run(work, offTheLoop: bytes >= threshold)
    }

    /// Runs `work`, which writes `bytes` bytes of JSON, on the blocking pool when they reach
    /// ``writingThreshold``, else here.
    static func run<Value: Sendable>(
        writing bytes: Int, _ work: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        try await run(work, offTheLoop: bytes >= writingThreshold)
    }

    private static func run<Value: Sendable>(
        _ work: @escaping @Sendable () throws -> Value, offTheLoop: Bool
    ) async throws -> Value {
        guard offTheLoop else { return try work() }
        return try await NIOThreadPool.singleton.runIfActive(work)
    }
}
