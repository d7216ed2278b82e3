import ArgumentParser
import Foundation
import InstantPDF
import InstantServer

/// `--pdf-max-decoded-bytes` and `--pdf-max-image-pixels`: the limits of reading and writing one PDF,
/// for `serve`, `inspect` and offline exports.
struct PDFLimitOptions: ParsableArguments {
    @Option(
        name: .customLong(PDFProcessingConfiguration.Setting.maxDecodedBytes.option),
        help: """
            The most bytes one upload or export may decode: every stream filter, every stream, every image \
            (default 268435456, 256 MiB). Env: \(PDFProcessingConfiguration.Setting.maxDecodedBytes.environmentVariable).
            """)
    var maxDecodedBytes: Int?

    @Option(
        name: .customLong(PDFProcessingConfiguration.Setting.maxImagePixels.option),
        help: """
            The most pixels (width × height) of a PNG image the PDF writer decodes (default 50000000). \
            Env: \(PDFProcessingConfiguration.Setting.maxImagePixels.environmentVariable).
            """)
    var maxImagePixels: Int?

    /// The limits from the options, else from the environment, else the defaults.
    func limits(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PDFLimits {
        let defaults = PDFLimits.default
        return PDFLimits(
            maxDecodedBytes: try LimitOption.count(maxDecodedBytes, .maxDecodedBytes, environment, minimum: 1)
                ?? defaults.maxDecodedBytes,
            maxImagePixels: try LimitOption.count(maxImagePixels, .maxImagePixels, environment, minimum: 1)
                ?? defaults.maxImagePixels)
    }

    /// A PDF error with, for a limit, the option that raises it.
    static func describe(_ error: PDFError) -> String {
        guard let limit = error.limit else { return error.message }
        return "\(error.message); raise it with --\(PDFProcessingConfiguration.Setting(limit).option)"
    }
}

/// The PDF options of `instant serve`: the limits, and the worker threads with their queue.
struct PDFProcessingOptions: ParsableArguments {
    @OptionGroup var limits: PDFLimitOptions

    @Option(
        name: .customLong(PDFProcessingConfiguration.Setting.workers.option),
        help: """
            The threads that read uploaded and write exported PDFs, away from the threads that answer \
            other requests (default: the cores minus one, at least 1). \
            Env: \(PDFProcessingConfiguration.Setting.workers.environmentVariable).
            """)
    var workers: Int?

    @Option(
        name: .customLong(PDFProcessingConfiguration.Setting.queueLimit.option),
        help: """
            How many uploads and exports may wait for a PDF worker; more get 503 with Retry-After \
            (default 16). Env: \(PDFProcessingConfiguration.Setting.queueLimit.environmentVariable).
            """)
    var queueLimit: Int?

    /// The configuration from the options, else from the environment, else the defaults.
    func configuration(environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> PDFProcessingConfiguration
    {
        let defaults = PDFProcessingConfiguration()
        return PDFProcessingConfiguration(
            limits: try limits.limits(environment: environment),
            workers: try LimitOption.count(workers, .workers, environment, minimum: 1) ?? defaults.workers,
            queueLimit: try LimitOption.count(queueLimit, .queueLimit, environment, minimum: 0) ?? defaults.queueLimit)
    }
}

extension LimitOption {
    /// A whole number of a PDF setting, from its option, else its environment variable.
    static func count(
        _ option: Int?, _ setting: PDFProcessingConfiguration.Setting, _ environment: [String: String], minimum: Int
    ) throws -> Int? {
        try count(option, "--\(setting.option)", setting.environmentVariable, environment, minimum: minimum)
    }
}
