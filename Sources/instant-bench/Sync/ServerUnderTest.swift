import Foundation
import InstantServer
import InstantTesting

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
    private let process: ServeProcess?
    private let dataDirectory: URL?

    /// Starts `instant serve` in a temporary data directory (removed when it stops), or in
    /// `dataDirectory` (kept), with `arguments` added to its command line and `environment` to this
    /// process's environment.
    static func start(
        dataDirectory: URL? = nil, arguments: [String] = [], environment: [String: String] = [:]
    ) async throws -> ServerUnderTest {
        let directory =
            dataDirectory ?? FileManager.default.temporaryDirectory.appendingPathComponent("instant-bench-\(UUID())")
        let process = try await ServeProcess.start(
            dataDirectory: directory, arguments: arguments, environment: environment, logLevel: "error")
        return try await connect(
            process.baseURL, dataDirectory: directory, process: process, removesData: dataDirectory == nil)
    }

    /// Uses a running server whose development credentials are in `dataDirectory`.
    static func connect(
        _ url: URL, dataDirectory: URL, process: ServeProcess? = nil, processID: Int32? = nil,
        removesData: Bool = false
    ) async throws -> ServerUnderTest {
        guard let credentials = DevelopmentCredentials.load(from: dataDirectory) else {
            throw BenchmarkError("No development key and API token in \(dataDirectory.path).")
        }
        return ServerUnderTest(
            baseURL: url,
            apiToken: credentials.apiAuthToken,
            issuer: try await ClientTokenIssuer(
                privateKeyPEM: credentials.keyPair.privateKeyPEM, algorithm: credentials.keyPair.algorithm),
            processID: process?.process.processIdentifier ?? processID,
            process: process,
            dataDirectory: removesData ? dataDirectory : nil
        )
    }

    /// A client token for a layer of a document (the default layer unless named).
    func token(document: String, layer: String? = nil, user: String, tokenID: String? = nil) async throws -> String {
        try await issuer.sign(
            ClientClaims(
                documentID: document, layer: layer, permissions: ["read-document", "write"], userID: user,
                expiration: Date().addingTimeInterval(3600), tokenID: tokenID))
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

    /// The processor time the server has used since it started (user and system, all threads), in
    /// seconds, from /proc; `nil` without its process id.
    func processorTime() -> Double? {
        processID.flatMap(Self.processorTime(ofProcess:))
    }

    /// The processor time process `id` has used since it started (user and system, all threads),
    /// in seconds, from /proc.
    static func processorTime(ofProcess id: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(id)/stat", encoding: .utf8),
            let afterName = stat.lastIndex(of: ")")
        else { return nil }
        // After "pid (name) ", fields 3 on: utime and stime are fields 14 and 15, in clock ticks.
        let fields = stat[stat.index(after: afterName)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Stops a server this benchmark started and removes its data.
    func stop() {
        guard let process else { return }
        process.process.stopBlocking(within: 30)
        if let dataDirectory { try? FileManager.default.removeItem(at: dataDirectory) }
    }
}

/// A benchmark that cannot run, with the reason.
struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
