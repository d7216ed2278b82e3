import Foundation

/// The `instant serve` executable of the current build, running in a process of its own: what the
/// process tests, the several-node tests, the browser tests and the benchmarks talk to, the way a
/// developer starts it.
public final class ServeProcess: Sendable {
    /// The server's process.
    public let process: ChildProcess
    /// `http://127.0.0.1:<port>`.
    public let baseURL: URL
    /// The port the server listens on.
    public var port: Int { baseURL.port ?? 0 }

    private init(process: ChildProcess, baseURL: URL) {
        self.process = process
        self.baseURL = baseURL
    }

    /// An executable of this package beside the running one (the test runner or `instant-bench` of
    /// the same build): `instant` unless named.
    public static func executable(named name: String = "instant") throws -> URL {
        let running = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = running.deletingLastPathComponent()
        // The test runner may sit inside a bundle directory (…/X.xctest/…).
        while directory.path.contains(".xctest") { directory.deleteLastPathComponent() }
        let candidate = directory.appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: candidate.path) else {
            throw ChildProcess.Failure(
                "Build the \(name) executable first (swift build --product \(name)); looked at \(candidate.path).")
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
    ///   - logLevel: The server's `--log-level`.
    ///   - niceness: The server's scheduling priority (`nice`, 0 to 19), below that of other tests.
    public static func start(
        dataDirectory: URL, port: Int = 0, arguments: [String] = [], environment: [String: String] = [:],
        logLevel: String = "warning", niceness: Int = 0
    ) async throws -> ServeProcess {
        let (process, output) = try await ChildProcess.start(
            try executable().path,
            ["serve", "--port", String(port), "--data-dir", dataDirectory.path, "--log-level", logLevel] + arguments,
            environment: environment, niceness: niceness, readyWhen: #"listening on http://[0-9.]+:[0-9]+"#)
        guard let range = output.range(of: #"http://[0-9.]+:[0-9]+"#, options: .regularExpression),
            let url = URL(string: String(output[range]))
        else {
            await process.kill()
            throw ChildProcess.Failure("instant serve printed no address it listens on: \(output)")
        }
        return ServeProcess(process: process, baseURL: url)
    }

    /// Stops the server with SIGTERM and waits until it has exited, killing it after `seconds`.
    /// - Returns: Whether it ended on its own (its graceful shutdown finished in time).
    @discardableResult
    public func stop(within seconds: TimeInterval = 5) async -> Bool {
        await process.stop(within: seconds)
    }
}
