import Foundation
import Synchronization

/// Hands each value to every open `AsyncStream` it made, in the order the values are given,
/// until it is finished; streams made after that end at once.
///
/// Buffering: each stream keeps every value its consumer has not taken yet (unbounded), so no
/// value is lost and none is reordered; a consumer that stops iterating should let go of its
/// stream (or cancel its task), which ends the stream and frees its buffer.
final class Broadcast<Element: Sendable>: Sendable {
    /// The open streams' continuations; `nil` once finished.
    private let continuations = Mutex<[UUID: AsyncStream<Element>.Continuation]?>([:])

    /// A new stream that receives `first` (if any), then every value given from now on.
    func stream(startingWith first: Element? = nil) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .unbounded)
        if let first { continuation.yield(first) }
        let key = UUID()
        let isOpen = continuations.withLock { streams in
            guard streams != nil else { return false }
            streams?[key] = continuation
            return true
        }
        guard isOpen else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.continuations.withLock { streams in streams?[key] = nil }
        }
        return stream
    }

    /// Gives `value` to every open stream.
    func yield(_ value: Element) {
        continuations.withLock { streams in
            for continuation in (streams ?? [:]).values { continuation.yield(value) }
        }
    }

    /// Ends every stream after the values they hold; later values are dropped.
    func finish() {
        let ended = continuations.withLock { streams in
            defer { streams = nil }
            return streams ?? [:]
        }
        // Outside the lock: finishing runs the streams' termination handlers, which take it.
        for continuation in ended.values { continuation.finish() }
    }
}
