import ArgumentParser
import Foundation
import InstantTesting

/// The tools the benchmarks compare with (mutool, qpdf, PyMuPDF), run from `PATH`.
enum ExternalTool {
    /// Whether `name` is an executable on `PATH`.
    static func isInstalled(_ name: String) -> Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
    }

    /// Whether `python3` can import `module`.
    static func hasPython(module: String) -> Bool {
        (try? run("python3", ["-c", "import \(module)"])) != nil
    }

    /// Runs `tool` and returns what it printed (standard output, and standard error too with
    /// `includingErrors`), without the final end of line.
    ///
    /// - Throws: `ExitCode` with the tool's status when it fails.
    @discardableResult
    static func run(_ tool: String, _ arguments: [String], includingErrors: Bool = false) throws -> String {
        let (status, text) = try ChildProcess.runBlocking(tool, arguments, includingErrors: includingErrors)
        guard status == 0 else { throw ExitCode(status) }
        return text.trimmingCharacters(in: .newlines)
    }
}
