import Foundation
import InstantServer

/// The server a benchmark talks to: an `instant serve` process it starts itself (the `instant`
/// executable next to `instant-bench`, on a free port, with a fresh data directory), or a running
/// one given by URL and data directory.
struct ServerUnderTest {
    /// `http://host:port`.
    let baseURL: URL
    /// The backend's API token.
    let apiToken: String
    /// Signs client tokens with the server's development key.
    let issuer: ClientTokenIssuer
    /// The server's process id, for its memory figures (`nil` if unknown).
    let processID: Int32?
    private let process: Process?
    private let dataDirectory: URL?

    /// Starts `instant serve` in a temporary data directory (removed when it stops), or in
    /// `dataDirectory` (kept), with `arguments` added to its command line and `environment` to this
    /// process's environment.
    static func start(
        dataDirectory: URL? = nil, arguments: [String] = [], environment: [String: String] = [:]
    ) async throws -> ServerUnderTest {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("instant")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw BenchmarkError(
                "No 'instant' executable beside instant-bench at \(executable.path); "
                    + "build both with `swift build -c release`, or pass --server and --data-dir.")
        }
        let directory =
            dataDirectory ?? FileManager.default.temporaryDirectory.appendingPathComponent("instant-bench-\(UUID())")
        let process = Process()
        process.executableURL = executable
        process.arguments =
            ["serve", "--port", "0", "--data-dir", directory.path, "--log-level", "error"] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var text = ""
        while !text.contains("listening on") {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw BenchmarkError("instant serve exited: \(text)") }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let range = text.range(of: #"http://[0-9.]+:[0-9]+"#, options: .regularExpression),
            let url = URL(string: String(text[range]))
        else { throw BenchmarkError("Cannot read the server's address from: \(text)") }
        return try await connect(url, dataDirectory: directory, process: process, removesData: dataDirectory == nil)
    }

    /// Uses a running server whose development credentials are in `dataDirectory`.
    static func connect(
        _ url: URL, dataDirectory: URL, process: Process? = nil, processID: Int32? = nil, removesData: Bool = false
    ) async throws -> ServerUnderTest {
        guard let credentials = DevelopmentCredentials.load(from: dataDirectory) else {
            throw BenchmarkError("No development key and API token in \(dataDirectory.path).")
        }
        return ServerUnderTest(
            baseURL: url,
            apiToken: credentials.apiAuthToken,
            issuer: try await ClientTokenIssuer(
                privateKeyPEM: credentials.keyPair.privateKeyPEM, algorithm: credentials.keyPair.algorithm),
            processID: process?.processIdentifier ?? processID,
            process: process,
            dataDirectory: removesData ? dataDirectory : nil
        )
    }

    /// A client token for a layer of a document (the default layer unless named).
    func token(document: String, layer: String? = nil, user: String) async throws -> String {
        try await issuer.sign(
            ClientClaims(
                documentID: document, layer: layer, permissions: ["read-document", "write"], userID: user,
                expiration: Date().addingTimeInterval(3600)))
    }

    /// The server's resident memory in bytes, from /proc.
    func residentMemory() -> Int? { memoryFigure("VmRSS:") }

    /// The most resident memory the server has had since it started, in bytes, from /proc.
    func peakResidentMemory() -> Int? { memoryFigure("VmHWM:") }

    private func memoryFigure(_ name: String) -> Int? {
        guard let processID,
            let status = try? String(contentsOfFile: "/proc/\(processID)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name) })
        else { return nil }
        return line.split(separator: " ").compactMap { Int($0) }.first.map { $0 * 1024 }
    }

    /// Stops a server this benchmark started and removes its data.
    func stop() {
        guard let process else { return }
        process.terminate()
        process.waitUntilExit()
        if let dataDirectory { try? FileManager.default.removeItem(at: dataDirectory) }
    }
}

/// A benchmark that cannot run, with the reason.
struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
