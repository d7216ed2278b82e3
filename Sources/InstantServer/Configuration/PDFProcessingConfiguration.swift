import Foundation
import InstantPDF

/// How the server does its CPU-heavy PDF work (reading uploaded PDFs, writing exported PDFs and
/// the images in them): what one operation may decode, and the pool of worker threads that does
/// it away from the threads that answer every other request.
public struct PDFProcessingConfiguration: Hashable, Sendable {
    /// What one upload or export may decode (``PDFLimits``); beyond them the request gets 422.
    public var limits: PDFLimits
    /// The worker threads of ``PDFWorkPool``. The default, one less than the machine's cores (at
    /// least one), leaves a core to the event loops, `/healthcheck`, sync and listening.
    public var workers: Int
    /// How many PDF operations may wait for a worker; one more gets 503 with `Retry-After`. The
    /// default, 16, lets a burst of exports wait a little, while a flood is refused instead of
    /// holding ever more request bodies in memory.
    public var queueLimit: Int

    /// The default number of workers: one less than the active processor cores, at least one.
    public static var defaultWorkers: Int { max(1, ProcessInfo.processInfo.activeProcessorCount - 1) }

    /// Creates a configuration; `workers` must be positive and `queueLimit` not negative.
    public init(limits: PDFLimits = .default, workers: Int = Self.defaultWorkers, queueLimit: Int = 16) {
        precondition(workers > 0 && queueLimit >= 0, "PDF processing needs a worker and a queue limit of 0 or more")
        self.limits = limits
        self.workers = workers
        self.queueLimit = queueLimit
    }
}

extension PDFProcessingConfiguration {
    /// The names by which `instant serve` sets each value: its command-line option and its
    /// environment variable. Refusals name them, so that an operator knows what to raise.
    public enum Setting: String, CaseIterable, Sendable {
        /// ``PDFLimits/maxDecodedBytes``.
        case maxDecodedBytes = "pdf-max-decoded-bytes"
        /// ``PDFLimits/maxImagePixels``.
        case maxImagePixels = "pdf-max-image-pixels"
        /// ``PDFProcessingConfiguration/workers``.
        case workers = "pdf-workers"
        /// ``PDFProcessingConfiguration/queueLimit``.
        case queueLimit = "pdf-queue-limit"

        /// The option of `instant serve` without its dashes (`pdf-max-decoded-bytes`).
        public var option: String { rawValue }
        /// The environment variable (`PDF_MAX_DECODED_BYTES`).
        public var environmentVariable: String { rawValue.uppercased().replacingOccurrences(of: "-", with: "_") }
        /// `--option (ENVIRONMENT_VARIABLE)`, for messages.
        public var named: String { "--\(option) (\(environmentVariable))" }

        /// The setting of a PDF limit.
        public init(_ limit: PDFLimit) {
            switch limit {
            case .decodedBytes: self = .maxDecodedBytes
            case .imagePixels: self = .maxImagePixels
            }
        }
    }
}
