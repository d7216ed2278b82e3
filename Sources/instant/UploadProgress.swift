import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A one-line progress bar on standard error: `Uploading  45% [#########           ] 12.3 of 27.0 MB`.
final class ProgressBar: @unchecked Sendable {
    private let title: String
    private let lock = NSLock()
    private var lastPercent = -1

    init(title: String) { self.title = title }

    /// Redraws the bar when the percentage changes.
    func update(done: Int64, total: Int64) {
        guard total > 0 else { return }
        let percent = Int(done * 100 / total)
        let line: String? = lock.withLock {
            guard percent != lastPercent else { return nil }
            lastPercent = percent
            let filled = percent / 5
            let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: 20 - filled)
            return String(
                format: "\r%@ %3d%% [%@] %.1f of %.1f MB", title, percent, bar, Double(done) / 1e6,
                Double(total) / 1e6)
        }
        if let line { FileHandle.standardError.write(Data(line.utf8)) }
    }

    /// Ends the line.
    func finish() {
        FileHandle.standardError.write(Data("\n".utf8))
    }
}

/// Reports the bytes of a request body sent so far.
final class UploadProgressDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    private let report: @Sendable (Int64, Int64) -> Void

    init(report: @escaping @Sendable (Int64, Int64) -> Void) { self.report = report }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        report(totalBytesSent, totalBytesExpectedToSend)
    }
}
