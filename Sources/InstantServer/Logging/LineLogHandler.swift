import Foundation
import Logging
import Synchronization

/// Writes each log message as one line of text:
/// `2026-11-28T10:00:00+0000 info instant: document.id=… request.id=… [InstantServer] message`
/// (the time, the level, the logger's label, its metadata by key, the module that logged, the
/// message); the layout of swift-log's `StreamLogHandler`.
///
/// Metadata is turned into text only when a message is written. `StreamLogHandler` formats all of
/// a logger's metadata each time one item is set, and the server sets a request's id on every
/// request's logger (Hummingbird's `hb.request.id`, then `request.id`): two formattings for each
/// request, whatever the log level, most of them never written.
public struct LineLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?

    private let label: String
    private let output: LineOutput

    /// A handler labelled `label` that writes its lines to standard error.
    public init(label: String, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.init(label: label, output: .standardError, metadataProvider: metadataProvider)
    }

    /// A handler labelled `label` that gives each line (ending with a newline) to `write`, one
    /// line at a time.
    public init(
        label: String, metadataProvider: Logger.MetadataProvider? = nil, write: @escaping @Sendable (String) -> Void
    ) {
        self.init(label: label, output: LineOutput(write: write), metadataProvider: metadataProvider)
    }

    private init(label: String, output: LineOutput, metadataProvider: Logger.MetadataProvider?) {
        self.label = label
        self.output = output
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let provided = metadataProvider?.get() {
            all.merge(provided) { _, provided in provided }
        }
        if let given = event.metadata {
            all.merge(given) { _, given in given }
        }
        if let error = event.error {
            all["error.message"] = "\(error)"
            all["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        var line = Self.timestamp(Date())
        line += " \(event.level)"
        if !label.isEmpty { line += " \(label)" }
        line += ":"
        for (key, value) in all.sorted(by: { $0.key < $1.key }) {
            line += " \(key)=\(value)"
        }
        line += " [\(event.source)] \(event.message)\n"
        output.write(line)
    }

    /// The time in the local time zone, to the second, with its offset from UTC
    /// (`2026-11-28T10:00:00+0000`).
    static func timestamp(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return "<unknown time>" }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            let count = strftime(buffer.baseAddress!, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
            return String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress, count: count), as: UTF8.self)
        }
    }
}

/// Where a ``LineLogHandler``'s lines go: whole lines, one writer at a time, so that lines from
/// several threads do not interleave.
private final class LineOutput: Sendable {
    private let lock = Mutex(())
    private let sink: @Sendable (String) -> Void

    init(write: @escaping @Sendable (String) -> Void) {
        sink = write
    }

    /// Standard error (``writeToStandardError(_:)``).
    static let standardError = LineOutput(write: writeToStandardError)

    func write(_ line: String) {
        lock.withLock { _ in sink(line) }
    }
}

/// Writes `line` to standard error with `write(2)`: a failed write (standard error closed) loses
/// the line and nothing else, where `FileHandle.write(_:)` would stop the process.
private func writeToStandardError(_ line: String) {
    var line = line
    line.withUTF8 { bytes in
        var written = 0
        while written < bytes.count {
            let result = write(STDERR_FILENO, bytes.baseAddress! + written, bytes.count - written)
            if result > 0 {
                written += result
            } else if result < 0 && errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}
