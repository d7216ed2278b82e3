import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A throwaway PostgreSQL server for tests and benchmarks: a fresh cluster in a temporary
/// directory, on 127.0.0.1 with a free port (or on its Unix socket only), whose only user is
/// `instant` (trusted, no password).
///
/// ```swift
/// let server = try await PostgresTestServer.shared()     // one per process, started once
/// let url = try await server.makeDatabase()              // a new empty database
/// let backend = try PostgresBackend(configuration: .init(url: url))
/// ```
///
/// It uses the `initdb`, `pg_ctl` and `postgres` of `PATH`, or else of the newest
/// `/usr/lib/postgresql/*/bin`. PostgreSQL refuses to run as root, so as root it runs them as the
/// `postgres` user (`runuser -u postgres --`), which then owns the temporary directory.
///
/// The server runs as a child process (`postgres` in the foreground, as `pg_ctl start` would run
/// it, started with ``SpawnedProcess``) rather than as a daemon of `pg_ctl start`, so that this
/// process sees it end. ``stop()`` and ``restart()`` use `pg_ctl stop`. ``stop()`` removes everything; if the
/// process ends without it, a watchdog process stops the server and removes its directory.
public final class PostgresTestServer: Sendable {
    /// Why a server cannot be started.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong and what to do.
        public var description: String
    }

    /// The user every database belongs to.
    public static let user = "instant"
    /// The database that ``start(fsync:settings:unixSocketOnly:)`` creates.
    public static let defaultDatabase = "instant"

    /// The TCP port on 127.0.0.1, also in the name of the Unix socket (only there with
    /// ``unixSocketOnly``).
    public let port: Int
    /// The temporary directory: the cluster (`data`), the server's log (`postgres.log`), and the
    /// Unix socket.
    public let directory: URL
    /// Whether the server writes durably (`fsync`); tests do not need it.
    public let fsync: Bool
    /// Settings of the server beyond the defaults of ``start(fsync:settings:unixSocketOnly:)``, by name.
    public let settings: [String: String]
    /// Whether the server listens on its Unix socket only, not on 127.0.0.1.
    public let unixSocketOnly: Bool
    /// The directory of the server's programs (`initdb`, `pg_ctl`, `postgres`, and on Debian
    /// `pgbench` beside them).
    public let binaries: URL
    private let state = NIOLockedValueBox(State())

    private struct State {
        /// The running `postgres` (or `runuser` running it).
        var server: SpawnedProcess?
        var watchdog: SpawnedProcess?
        var databases = 0
    }

    /// `postgres://instant@127.0.0.1:<port>/instant` (through the Unix socket when the server
    /// listens on it only).
    public var url: String { url(database: Self.defaultDatabase) }

    /// The URL of a database of this server (through the Unix socket when the server listens on
    /// it only).
    public func url(database: String) -> String {
        if unixSocketOnly { return socketURL(database: database) }
        return "postgres://\(Self.user)@127.0.0.1:\(port)/\(database)"
    }

    /// The URL of a database through the server's Unix socket.
    public func socketURL(database: String) -> String {
        "postgres://\(Self.user)@/\(database)?host=\(directory.path)&port=\(port)"
    }

    /// The server's log.
    public var log: String {
        (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
    }

    private var logFile: URL { directory.appendingPathComponent("postgres.log") }
    private var dataDirectory: String { directory.appendingPathComponent("data").path }

    private init(
        port: Int, directory: URL, fsync: Bool, settings: [String: String], unixSocketOnly: Bool, binaries: URL
    ) {
        self.port = port
        self.directory = directory
        self.fsync = fsync
        self.settings = settings
        self.unixSocketOnly = unixSocketOnly
        self.binaries = binaries
    }

    deinit { stop() }

    // MARK: Starting

    private static let sharedServer = Task { try await start() }

    /// The server of this process: started by the first call, then shared (make a database per
    /// test with ``makeDatabase()``). Don't restart or stop it; start a server of your own for that.
    public static func shared() async throws -> PostgresTestServer {
        try await sharedServer.value
    }

    /// Starts a new server with an empty database ``defaultDatabase``.
    /// - Parameters:
    ///   - fsync: Whether the server writes durably; off makes tests faster.
    ///   - settings: Settings of the server, by name (`postgres -c name=value`), such as
    ///     `shared_preload_libraries`.
    ///   - unixSocketOnly: Listen on the Unix socket in the server's directory only, not on
    ///     127.0.0.1: for a server that ``restart(whileDown:)`` must bring back on the same address
    ///     whatever else the machine runs (another program may take a free TCP port while the
    ///     server is down, but not a socket in its own directory).
    /// - Throws: ``Failure`` when PostgreSQL is not installed or does not start.
    public static func start(fsync: Bool = false, settings: [String: String] = [:], unixSocketOnly: Bool = false)
        async throws -> PostgresTestServer
    {
        let binaries = try findBinaries()
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("instant-pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        do {
            try handOver(directory)
            try run(
                binaries.appendingPathComponent("initdb"),
                [
                    "-D", directory.appendingPathComponent("data").path, "-A", "trust", "-U", user, "-E", "UTF8",
                    "--no-locale", "--no-sync",
                ],
                in: directory
            )
            // A free port can be taken by someone else before the server binds it: try another.
            var attempt = 1
            while true {
                let server = PostgresTestServer(
                    port: try await freePort(), directory: directory, fsync: fsync, settings: settings,
                    unixSocketOnly: unixSocketOnly, binaries: binaries)
                do {
                    try await server.startServer()
                } catch let error as Failure where attempt < 5 && error.description.contains("already in use") {
                    attempt += 1
                    continue
                }
                server.startWatchdog()
                do {
                    try await server.createDatabase(defaultDatabase)
                } catch {
                    server.stop()
                    throw error
                }
                return server
            }
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// The directory with `initdb`, `pg_ctl` and `postgres`: the first on `PATH` with all three,
    /// or the newest `/usr/lib/postgresql/<version>/bin`.
    /// - Throws: ``Failure`` saying how to install PostgreSQL when there is none.
    public static func findBinaries() throws -> URL {
        let programs = ["initdb", "pg_ctl", "postgres"]
        func hasAll(_ directory: String) -> Bool {
            programs.allSatisfy { FileManager.default.isExecutableFile(atPath: "\(directory)/\($0)") }
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        if let directory = path.split(separator: ":").map(String.init).first(where: hasAll) {
            return URL(fileURLWithPath: directory)
        }
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        if let newest = versions.compactMap(Int.init).sorted().last(where: { hasAll("/usr/lib/postgresql/\($0)/bin") })
        {
            return URL(fileURLWithPath: "/usr/lib/postgresql/\(newest)/bin")
        }
        throw Failure(
            description: "PostgreSQL is not installed: no initdb, pg_ctl and postgres on PATH or in "
                + "/usr/lib/postgresql/*/bin. Install it (apt-get install postgresql, or brew install postgresql)."
        )
    }

    /// Runs `postgres` and returns once it accepts connections.
    /// - Throws: ``Failure`` with the server's log when it ends first or takes over a minute.
    private func startServer() async throws {
        var arguments = [
            "-D", dataDirectory, "-k", directory.path, "-p", "\(port)", "-c",
            "listen_addresses=\(unixSocketOnly ? "" : "127.0.0.1")", "-c", "max_connections=300",
        ]
        if !fsync { arguments += ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"] }
        for (name, value) in settings.sorted(by: { $0.key < $1.key }) { arguments += ["-c", "\(name)=\(value)"] }
        if !FileManager.default.fileExists(atPath: logFile.path) {
            _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        }
        let logStart = log.utf8.count
        let output = try FileHandle(forWritingTo: logFile)
        defer { try? output.close() }
        try output.seekToEnd()
        let process = try Self.launch(
            binaries.appendingPathComponent("postgres"), arguments, in: directory, output: output)
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, process.isRunning {
            if await acceptsConnections() {
                state.withLockedValue { $0.server = process }
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        process.send(SIGTERM)
        let status = process.isRunning ? "did not accept connections within 60 s" : "ended"
        throw Failure(
            description: "PostgreSQL (postgres \(arguments.joined(separator: " "))) \(status). Its log:\n"
                + String(decoding: log.utf8.dropFirst(logStart).suffix(4000), as: UTF8.self)
        )
    }

    /// Whether the server accepts a connection now.
    private func acceptsConnections() async -> Bool {
        guard let connection = try? await connect(database: "postgres") else { return false }
        try? await connection.close()
        return true
    }

    private func connect(database: String) async throws -> PostgresConnection {
        var configuration =
            unixSocketOnly
            ? PostgresConnection.Configuration(
                unixSocketPath: directory.appendingPathComponent(".s.PGSQL.\(port)").path, username: Self.user,
                password: nil, database: database)
            : PostgresConnection.Configuration(
                host: "127.0.0.1", port: port, username: Self.user, password: nil, database: database, tls: .disable)
        configuration.options.connectTimeout = .seconds(30)
        return try await PostgresConnection.connect(
            configuration: configuration, id: 0, logger: Logger(label: "instant.postgres-test-server"))
    }

    // MARK: Databases

    /// Creates a new empty database (`test_1`, `test_2`, …) and returns its URL.
    public func makeDatabase() async throws -> String {
        let name = state.withLockedValue { state in
            state.databases += 1
            return "test_\(state.databases)"
        }
        try await createDatabase(name)
        return url(database: name)
    }

    private func createDatabase(_ name: String) async throws {
        let connection = try await connect(database: "postgres")
        do {
            try await connection.query("CREATE DATABASE \(unescaped: name)", logger: connection.logger)
        } catch {
            try? await connection.close()
            throw Failure(description: "Cannot create the database \(name): \(String(reflecting: error))")
        }
        try await connection.close()
    }

    // MARK: Stopping and restarting

    /// Stops the server (`pg_ctl stop -m fast`, which ends every connection) and starts it again
    /// on the same port and socket, with the same data; `whileDown` runs while it is stopped.
    ///
    /// Another program may take the TCP port while the server is down; the restart then fails (a
    /// server started with `unixSocketOnly` always comes back).
    /// - Throws: ``Failure`` when the server did not stop within a minute or did not start again.
    public func restart(whileDown: @Sendable () async -> Void = {}) async throws {
        try await onOwnThread { try self.stopServer(mode: "fast") }
        await whileDown()
        try await startServer()
    }

    /// Stops the server and removes its directory. Later calls do nothing.
    public func stop() {
        let (server, watchdog) = state.withLockedValue { state in
            defer {
                state.server = nil
                state.watchdog = nil
            }
            return (state.server, state.watchdog)
        }
        guard server != nil else { return }
        watchdog?.send(SIGTERM)
        try? stopServer(mode: "immediate")
        try? FileManager.default.removeItem(at: directory)
    }

    /// Stops the server with `pg_ctl stop -m <mode>` and waits until it has ended (`pg_ctl` gives
    /// up after a minute).
    private func stopServer(mode: String) throws {
        try Self.run(
            binaries.appendingPathComponent("pg_ctl"), ["stop", "-m", mode, "-D", dataDirectory], in: directory)
        guard let server = state.withLockedValue({ $0.server }) else { return }
        // `postgres` has ended when `pg_ctl` returns; its parent (`runuser`, as root) follows.
        _ = server.waitUntilExit(within: 10)
    }

    /// Stops the server and removes the directory when this process has ended without ``stop()``
    /// (a crash, or a process that never releases the server it shares).
    private func startWatchdog() {
        let stopCommand =
            (Self.commandPrefix + [
                binaries.appendingPathComponent("pg_ctl").path, "stop", "-m", "immediate", "-D", dataDirectory,
            ]).map { "'\($0)'" }.joined(separator: " ")
        let script = """
            trap '' INT HUP
            while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done
            \(stopCommand) >/dev/null 2>&1
            rm -rf '\(directory.path)'
            """
        if let watchdog = try? SpawnedProcess("/bin/sh", ["-c", script]) {
            state.withLockedValue { $0.watchdog = watchdog }
        }
    }

    // MARK: Running PostgreSQL's programs

    /// What runs PostgreSQL's programs as the `postgres` user when this process runs as root
    /// (PostgreSQL refuses root): `runuser -u postgres --`; nothing otherwise.
    private static let commandPrefix: [String] = {
        guard geteuid() == 0 else { return [] }
        let runuser =
            ["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"].first {
                FileManager.default.isExecutableFile(atPath: $0)
            } ?? "/usr/sbin/runuser"
        return [runuser, "-u", "postgres", "--"]
    }()

    /// Starts one of PostgreSQL's programs in `directory`, through ``commandPrefix``.
    private static func launch(_ program: URL, _ arguments: [String], in directory: URL, output: FileHandle) throws
        -> SpawnedProcess
    {
        let command = commandPrefix + [program.path] + arguments
        do {
            return try SpawnedProcess(
                command[0], Array(command.dropFirst()), directory: directory.path, output: output.fileDescriptor,
                errors: output.fileDescriptor)
        } catch {
            throw Failure(description: "Cannot run \(command[0]): \(error)")
        }
    }

    /// Runs one of PostgreSQL's programs to its end.
    /// - Throws: ``Failure`` with the program's output when it fails.
    private static func run(_ program: URL, _ arguments: [String], in directory: URL) throws {
        let output = Pipe()
        let process = try launch(program, arguments, in: directory, output: output.fileHandleForWriting)
        try? output.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(
                description: "\(program.lastPathComponent) \(arguments.joined(separator: " ")) failed "
                    + "(exit status \(process.terminationStatus)):\n\(text)"
            )
        }
    }

    /// Gives the directory to the `postgres` user when this process is root, so that the server,
    /// which runs as that user, can write in it.
    private static func handOver(_ directory: URL) throws {
        guard !commandPrefix.isEmpty else { return }
        guard let user = getpwnam("postgres") else {
            throw Failure(
                description: "This process runs as root, which PostgreSQL refuses, and there is no 'postgres' user "
                    + "to run it as. Create one (apt-get install postgresql does) or run the tests as another user."
            )
        }
        guard chown(directory.path, user.pointee.pw_uid, user.pointee.pw_gid) == 0 else {
            throw Failure(description: "Cannot give \(directory.path) to the postgres user (errno \(errno)).")
        }
    }

    /// A TCP port of 127.0.0.1 that nothing listens on now.
    private static func freePort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port
        try await channel.close()
        guard let port else { throw Failure(description: "Cannot find a free TCP port on 127.0.0.1.") }
        return port
    }
}
