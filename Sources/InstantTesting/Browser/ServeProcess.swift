import Foundation

/// The `instant serve` executable of the current build, running in a process of its own: what the
/// browser tests and benchmarks talk to, the way a developer starts it.
public final class ServeProcess: @unchecked Sendable {
    /// The process (only terminated and waited for once started).
    private let process: Process
    /// `http://127.0.0.1:<port>`.
    public let baseURL: URL
    /// The port the server listens on.
    public var port: Int { baseURL.port ?? 0 }

    private init(process: Process, baseURL: URL) {
        self.process = process
        self.baseURL = baseURL
    }

    /// The `instant` executable beside the running one (the test runner or `instant-bench` of the
    /// same build).
    public static func executable() throws -> URL {
        let running = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = running.deletingLastPathComponent()
        // The test runner may sit inside a bundle directory (…/X.xctest/…).
        while directory.path.contains(".xctest") { directory.deleteLastPathComponent() }
        let candidate = directory.appendingPathComponent("instant")
        guard FileManager.default.isExecutableFile(atPath: candidate.path) else {
            throw BrowserSession.Failure(
                "Build the instant executable first (swift build --product instant); looked at \(candidate.path).")
        }
        return candidate
    }

    /// Starts `instant serve --data-dir <directory>` on 127.0.0.1 and returns once it listens.
    /// - Parameters:
    ///   - dataDirectory: The data directory (development credentials are created in it).
    ///   - port: The port; `0` picks a free one (restart a stopped server on its old port to keep
    ///     its pages' origin).
    ///   - arguments: More options of `instant serve`.
    ///   - environment: More environment variables.
    ///   - niceness: The server's scheduling priority (`nice`, 0 to 19), below that of other tests.
    public static func start(
        dataDirectory: URL, port: Int = 0, arguments: [String] = [], environment: [String: String] = [:],
        niceness: Int = 0
    ) async throws -> ServeProcess {
        let executable = try executable()
        return try await onOwnThread { () throws -> ServeProcess in
            let process = Process()
            // `nice` execs the server: the process is the server's.
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments =
                [
                    "nice", "-n", String(niceness), executable.path, "serve", "--port", String(port), "--data-dir",
                    dataDirectory.path, "--log-level", "warning",
                ]
                + arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            var text = ""
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty {
                    // The end of the output, unless a signal cut the read short.
                    if !process.isRunning { break }
                    usleep(10_000)
                    continue
                }
                text += String(decoding: chunk, as: UTF8.self)
                if let range = text.range(of: #"listening on (http://[0-9.]+:[0-9]+)"#, options: .regularExpression) {
                    output.fileHandleForReading.readabilityHandler = { handle in
                        // Empty at the end of the output, when the handler must stop.
                        if handle.availableData.isEmpty { handle.readabilityHandler = nil }
                    }
                    let url = URL(string: String(text[range].dropFirst("listening on ".count)))!
                    return ServeProcess(process: process, baseURL: url)
                }
            }
            kill(process.processIdentifier, SIGKILL)
            throw BrowserSession.Failure("instant serve did not start: \(text)")
        }
    }

    /// Stops the server with SIGTERM and waits until it has exited (killing it after 5 seconds).
    public func stop() async {
        if process.isRunning { process.terminate() }
        await BrowserSession.end(process)
    }
}
