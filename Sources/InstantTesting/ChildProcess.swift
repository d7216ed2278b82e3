import Foundation

/// A program the tests and benchmarks run: either to its end, for its output, or started and left
/// running until it says it is ready, then stopped with a signal.
///
/// ```swift
/// let (status, output) = try await ChildProcess.run("qpdf", ["--check", path])
/// let driver = try await ChildProcess.start("chromedriver", ["--port=0"], readyWhen: #"on port [0-9]+"#)
/// await driver.process.stop()
/// ```
///
/// Programs are found on `PATH` (through `/usr/bin/env`) unless given by path, and started with
/// ``SpawnedProcess`` (not Foundation's `Process`, whose start can crash on Linux). The waits poll
/// on a thread of their own, off the cooperative pool.
public final class ChildProcess: @unchecked Sendable {
    /// A program that could not be started, ended too soon, or did not say it was ready.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// The process, only signalled and waited for after its start.
    private let process: SpawnedProcess

    private init(process: SpawnedProcess) {
        self.process = process
    }

    /// The process id.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Whether the process has not ended yet.
    public var isRunning: Bool { process.isRunning }

    /// The exit status, or the signal that ended it; only meaningful once it ended.
    public var terminationStatus: Int32 { process.terminationStatus }

    /// Whether it ended by exiting (rather than by a signal); only meaningful once it ended.
    public var exited: Bool { process.exited }

    /// Runs `program` to its end and returns its exit status and standard output (and standard
    /// error too with `includingErrors`).
    public static func run(
        _ program: String, _ arguments: [String], includingErrors: Bool = false, environment: [String: String] = [:]
    ) async throws -> (status: Int32, output: String) {
        try await onOwnThread {
            try runBlocking(program, arguments, includingErrors: includingErrors, environment: environment)
        }
    }

    /// ``run(_:_:includingErrors:environment:)`` on the calling thread, for synchronous callers
    /// (a test's enabling condition, a command-line tool).
    public static func runBlocking(
        _ program: String, _ arguments: [String], includingErrors: Bool = false, environment: [String: String] = [:]
    ) throws -> (status: Int32, output: String) {
        let output = Pipe()
        let process = try launch(
            program, arguments, niceness: 0, environment: environment, output: output, includingErrors: includingErrors)
        try? output.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Starts `program` and waits until its output (standard output, and standard error with
    /// `includingErrors`) matches the regular expression `readyWhen`.
    /// - Parameters:
    ///   - niceness: Its scheduling priority (`nice`, 0 to 19): programs that run beside the tests
    ///     give the CPU to them first.
    ///   - timeout: How long to wait for it to be ready before killing it.
    /// - Returns: The process and its output up to and including the match. The rest of its output
    ///   is read and dropped, so that it never blocks on a full pipe.
    /// - Throws: ``Failure`` with its output when it ends or times out before it is ready.
    public static func start(
        _ program: String, _ arguments: [String], environment: [String: String] = [:], niceness: Int = 0,
        includingErrors: Bool = false, readyWhen pattern: String, timeout: TimeInterval = 60
    ) async throws -> (process: ChildProcess, output: String) {
        try await onOwnThread { () throws -> (process: ChildProcess, output: String) in
            let output = Pipe()
            let process = try launch(
                program, arguments, niceness: niceness, environment: environment, output: output,
                includingErrors: includingErrors)
            try? output.fileHandleForWriting.close()
            let child = ChildProcess(process: process)
            var text = ""
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty {
                    // The end of the output, unless a signal cut the read short.
                    if !process.isRunning { break }
                    usleep(10_000)
                    continue
                }
                text += String(decoding: chunk, as: UTF8.self)
                if let range = text.range(of: pattern, options: .regularExpression) {
                    output.fileHandleForReading.readabilityHandler = { handle in
                        // Empty at the end of the output, when the handler must stop.
                        if handle.availableData.isEmpty { handle.readabilityHandler = nil }
                    }
                    return (child, String(text[..<range.upperBound]))
                }
            }
            let ended = !process.isRunning
            child.killBlocking()
            throw Failure(
                "\(program) \(ended ? "ended" : "was still not ready after \(Int(timeout)) s") before its output "
                    + "matched \(pattern); it printed:\n\(text)")
        }
    }

    /// Sends SIGTERM and waits up to `seconds` for the process to end, then kills it.
    /// - Returns: Whether it ended on its own (a graceful shutdown), rather than killed.
    @discardableResult
    public func stop(within seconds: TimeInterval = 5) async -> Bool {
        await onOwnThread { [self] in stopBlocking(within: seconds) }
    }

    /// ``stop(within:)`` on the calling thread, for synchronous callers (a `defer`).
    @discardableResult
    public func stopBlocking(within seconds: TimeInterval = 5) -> Bool {
        terminate()
        let ended = process.waitUntilExit(within: seconds)
        if !ended { killBlocking() }
        return ended
    }

    /// Sends SIGTERM without waiting for the process to end.
    public func terminate() {
        process.send(SIGTERM)
    }

    /// Kills the process with SIGKILL (no chance to clean up) and waits until it has ended (at most
    /// 10 seconds).
    public func kill() async {
        await onOwnThread { [self] in killBlocking() }
    }

    private func killBlocking() {
        process.send(SIGKILL)
        // Bounded: a child that does not die (stuck in the kernel) does not hold the caller.
        _ = process.waitUntilExit(within: 10)
    }

    private static func launch(
        _ program: String, _ arguments: [String], niceness: Int, environment: [String: String], output: Pipe,
        includingErrors: Bool
    ) throws -> SpawnedProcess {
        // `env` and `nice` exec the program: the process id is the program's.
        let descriptor = output.fileHandleForWriting.fileDescriptor
        do {
            return try SpawnedProcess(
                "/usr/bin/env", (niceness == 0 ? [] : ["nice", "-n", String(niceness)]) + [program] + arguments,
                environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }, output: descriptor,
                errors: includingErrors ? descriptor : nil)
        } catch {
            throw Failure("Cannot run \(program): \(error).")
        }
    }
}
