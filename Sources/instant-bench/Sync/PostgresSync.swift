import AsyncHTTPClient
import Foundation
import InstantTesting
import Logging
import PostgresNIO

/// `instant-bench sync --postgres`: the sync server on PostgreSQL with two nodes.
enum PostgresSync {
    static func run(listeners: [Int], rounds: Int, writers: Int) async throws {
        let database = try await PostgresTestServer.start(fsync: true)
        defer { database.stop() }
        let url = try await database.makeDatabase()
        let shared = FileManager.default.temporaryDirectory.appendingPathComponent("instant-bench-\(UUID())")
        defer { try? FileManager.default.removeItem(at: shared) }
        let nodeA = try await ServerUnderTest.start(dataDirectory: shared, arguments: ["--database", url])
        defer { nodeA.stop() }
        let nodeB = try await ServerUnderTest.start(dataDirectory: shared, arguments: ["--database", url])
        defer { nodeB.stop() }
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(16, writers * 2))
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            try await measure(
                a: BenchAPI(http: http, server: nodeA), b: BenchAPI(http: http, server: nodeB), server: database,
                url: url, listeners: listeners, rounds: rounds, writers: writers)
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }

    private static func measure(
        a: BenchAPI, b: BenchAPI, server: PostgresTestServer, url: String, listeners: [Int], rounds: Int,
        writers: Int
    ) async throws {
        print(
            "PostgreSQL (fsync on) at \(url), nodes \(a.server.baseURL) and \(b.server.baseURL), "
                + "\(ProcessInfo.processInfo.activeProcessorCount) cores")
        for count in listeners {
            for (name, listenerAPI) in [("same node", a), ("other node", b)] {
                let result = try await Propagation.measure(
                    api: a, listenersOn: listenerAPI, listeners: count, rounds: rounds)
                print(
                    String(
                        format:
                            "propagation, %5d listeners on the %@: poke p50 %.3f ms p99 %.3f ms | applied by B p50 %.3f ms p99 %.3f ms",
                        count, name, result.poke.p50, result.poke.p99, result.applied.p50, result.applied.p99))
            }
        }
        // PostgreSQL's own rates before, between and after the two phases: each phase against the
        // two around it.
        let first = try await RawPostgres.floor(server: server, url: url, writers: writers)
        var before = first
        for (transport, name) in [(PushWriter.Transport.http, "over HTTP"), (.webSocket, "on WebSockets")] {
            let rate = try await Throughput.measure(api: a, over: transport, writers: writers, changesPerPush: 1)
            let after = try await RawPostgres.floor(server: server, url: url, writers: writers)
            defer { before = after }
            let raw = (before.postgresNIO + after.postgresNIO) / 2
            var line = String(
                format: "throughput, 1-change pushes %@, %d writers, one layer: %.0f changes/s "
                    + "(raw PostgreSQL %.0f single-row commits/s from %d connections, %.0f before and %.0f after: "
                    + "%.0f%%",
                name, writers, rate.perSecond, raw, writers, before.postgresNIO, after.postgresNIO,
                rate.perSecond / raw * 100)
            if let first = before.pgbench, let last = after.pgbench {
                let pgbench = (first + last) / 2
                line += String(
                    format: "; pgbench %.0f from %d clients, %.0f before and %.0f after: %.0f%%", pgbench, writers,
                    first, last, rate.perSecond / pgbench * 100)
            }
            print(line + ")" + rate.processorCost(against: nil, floor: "PostgreSQL") + rate.groupShape())
        }
        if first.pgbench == nil {
            print(
                "(pgbench is not installed beside the PostgreSQL server: the raw rate is measured with postgres-nio only)"
            )
        }
        let oneNode = try await Throughput.measureLayers(apis: [a], layers: 10, writers: writers)
        let twoNodes = try await Throughput.measureLayers(apis: [a, b], layers: 10, writers: writers)
        print(
            String(
                format: "throughput, 1-change pushes over 10 layers, %d writers: one node %.0f changes/s, "
                    + "two nodes %.0f changes/s", writers, oneNode, twoNodes))
    }
}

/// The floor: single-row commits straight into the same PostgreSQL, from as many connections as
/// the benchmark has writers; with postgres-nio (the client the server uses), and with PostgreSQL's
/// own `pgbench`, whose C client costs less per statement (the same machine runs the clients).
enum RawPostgres {
    /// PostgreSQL's single-row commit rates from `writers` clients: with postgres-nio, and with
    /// pgbench when it is installed.
    static func floor(server: PostgresTestServer, url: String, writers: Int) async throws -> (
        postgresNIO: Double, pgbench: Double?
    ) {
        (try await rate(url: url, writers: writers), try pgbenchRate(server: server, url: url, clients: writers))
    }

    /// Single-row commits per second from `clients` pgbench clients (prepared statements, two
    /// threads, 3,000 commits each), of the same rows as ``rate(url:writers:)`` into the same table; `nil` when
    /// pgbench is not installed beside the server's programs.
    static func pgbenchRate(server: PostgresTestServer, url: String, clients: Int) throws -> Double? {
        // Beside the server's programs, or beside the files they link to (Debian links them from
        // /usr/lib/postgresql/<version>/bin).
        let directories = [
            server.binaries,
            server.binaries.appendingPathComponent("initdb").resolvingSymlinksInPath().deletingLastPathComponent(),
        ]
        guard
            let pgbench = directories.map({ $0.appendingPathComponent("pgbench") }).first(where: {
                FileManager.default.isExecutableFile(atPath: $0.path)
            })
        else { return nil }
        guard let database = URLComponents(string: url)?.path.dropFirst(), !database.isEmpty else {
            throw BenchmarkError("Cannot read the database of the PostgreSQL URL \(url).")
        }
        let content = benchmarkNoteContent.map { String(format: "%02x", $0) }.joined()
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("pgbench-\(UUID()).sql")
        defer { try? FileManager.default.removeItem(at: script) }
        try Data(
            """
            INSERT INTO raw_commits (id, revision, content, updated_at)
                VALUES ('pgbench-' || :client_id || '-' || md5(random()::text || clock_timestamp()::text), 1,
                    '\\x\(content)'::bytea, extract(epoch from clock_timestamp()));
            """.replacingOccurrences(of: "\n", with: " ").utf8
        ).write(to: script)
        let output = try ExternalTool.run(
            pgbench.path,
            [
                "-h", "127.0.0.1", "-p", "\(server.port)", "-U", PostgresTestServer.user, "-n", "-M", "prepared",
                "-f", script.path, "-c", "\(clients)", "-j", "2", "-t", "3000", String(database),
            ], includingErrors: true)
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("tps = ") }),
            let tps = Double(line.dropFirst(6).prefix { $0 != " " })
        else { throw BenchmarkError("pgbench did not say its rate: \(output.suffix(500))") }
        return tps
    }

    static func rate(url: String, writers: Int) async throws -> Double {
        guard let components = URLComponents(string: url), let host = components.host, let port = components.port
        else { throw BenchmarkError("Cannot read the PostgreSQL URL \(url).") }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: components.user ?? "instant", password: components.password,
            database: String(components.path.dropFirst()), tls: .disable)
        configuration.options.maximumConnections = writers
        let client = PostgresClient(configuration: configuration)
        return try await withThrowingTaskGroup(of: Double?.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            let logger = Logger(label: "bench.raw-postgres")
            try await client.query(
                "CREATE TABLE IF NOT EXISTS raw_commits (id TEXT PRIMARY KEY, revision BIGINT, content BYTEA, updated_at DOUBLE PRECISION)",
                logger: logger)
            let content = benchmarkNoteContent
            let perWriter = 500
            // Ids of this measurement's own: the table keeps the rows of the ones before.
            let run = UUID().uuidString.prefix(8)
            let start = DispatchTime.now().uptimeNanoseconds
            try await withThrowingTaskGroup(of: Void.self) { writersGroup in
                for writer in 0..<writers {
                    writersGroup.addTask {
                        for row in 0..<perWriter {
                            let id = "\(run)-\(writer)-\(row)"
                            let now = Date().timeIntervalSince1970
                            try await client.query(
                                "INSERT INTO raw_commits (id, revision, content, updated_at) VALUES (\(id), \(row), \(content), \(now))",
                                logger: logger)
                        }
                    }
                }
                try await writersGroup.waitForAll()
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            group.cancelAll()
            return Double(writers * perWriter) / seconds
        }
    }
}
