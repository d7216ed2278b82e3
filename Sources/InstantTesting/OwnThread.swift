import Foundation

/// Runs long synchronous work (decoding a decompression bomb, compressing a large fixture) on a
/// thread of its own and waits for it without holding one of Swift's few cooperative threads, which
/// the other tests of the process, and the servers they start, need meanwhile.
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.stackSize = 16 << 20
        thread.start()
    }
}

/// Runs long synchronous work that cannot fail on a thread of its own (see the throwing variant).
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: work()) }
        thread.stackSize = 16 << 20
        thread.start()
    }
}
