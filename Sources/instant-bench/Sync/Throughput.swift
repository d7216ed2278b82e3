import Foundation
import GRDB
import InstantJSON
import InstantServer

/// Changes per second the server accepts from concurrent writers.
enum Throughput {
    /// A rate of changes (or rows), and the processor time each one cost.
    struct Rate {
        var perSecond: Double
        /// The processor time of the server (for the raw floor, of the benchmark's process) per
        /// change, in microseconds; `nil` when the server's process is unknown.
        var microseconds: Double?
        /// The processor time of the load generator (this process) per change, in microseconds.
        var loadMicroseconds: Double?
        /// The server's group transactions in the phase (from its `/metrics`), and the phase's
        /// length in seconds; `nil` when the server did not say.
        var groups: (commits: GroupCommits, seconds: Double)?

        /// ` | processor time a change: server 258 µs (8.2× raw SQLite's 31.6 µs a row), load
        /// generator 45 µs` (without the multiple when the floor's time is unknown), or nothing when
        /// the server's time is unknown. Machines that run at different speeds from one run to the
        /// next move rates more than these ratios.
        func processorCost(against floor: Rate?, floor name: String) -> String {
            guard let microseconds else { return "" }
            var text = String(format: " | processor time a change: server %.1f µs", microseconds)
            if let floorMicroseconds = floor?.microseconds {
                text += String(
                    format: " (%.1f× %@'s %.1f µs a row)", microseconds / floorMicroseconds, name, floorMicroseconds)
            }
            if let loadMicroseconds { text += String(format: ", load generator %.1f µs", loadMicroseconds) }
            return text
        }

        /// The floor around a phase: the mean of the floors measured just before and just after it
        /// (rates and processor times), so that a machine whose speed drifts during a run moves
        /// the phase and its floor alike.
        static func around(before: Rate, after: Rate) -> Rate {
            let microseconds = before.microseconds.flatMap { first in after.microseconds.map { (first + $0) / 2 } }
            return Rate(perSecond: (before.perSecond + after.perSecond) / 2, microseconds: microseconds)
        }

        /// ` | groups: 4.3 commits each, one every 1.95 ms`, or nothing when the server did not say:
        /// how many pushes shared a transaction (and its flush to the disk), and how far apart the
        /// transactions of the layer's chain came.
        func groupShape() -> String {
            guard let (groups, seconds) = groups, groups.count > 0 else { return "" }
            return String(
                format: " | groups: %.1f commits each, one every %.2f ms", groups.commits / groups.count,
                seconds / groups.count * 1e3)
        }
    }

    /// Changes per second from `writers` writers pushing `changesPerPush` changes at a time to one
    /// layer, each on a connection of its own (``PushWriter``): over HTTP, or as sync requests on
    /// its listening WebSocket.
    static func measure(
        api: BenchAPI, over transport: PushWriter.Transport, writers: Int, changesPerPush: Int
    ) async throws -> Rate {
        let document = try await api.newDocument()
        // About two seconds a phase on the reference machine: shorter phases (3,000 changes a
        // writer before 2026-11-26) moved by ±15% between runs of one binary.
        let pushesPerWriter = changesPerPush == 1 ? 2_000 : 150
        var connected: [PushWriter] = []
        do {
            for writer in 0..<writers {
                // A token per writer: the server limits the listening connections of one token. With
                // an id, as a backend that may revoke its tokens issues them: the server checks
                // whether it was revoked.
                let token = try await api.server.token(document: document, user: "w", tokenID: "w\(writer)-\(UUID())")
                let pushes = PushWriter.Pushes(
                    documentID: document, token: token, client: "w\(writer)", changesPerPush: changesPerPush)
                connected.append(try await PushWriter.connect(to: api.server.baseURL, over: transport, pushes: pushes))
            }
            let groupsBefore = await api.groupCommits()
            let (serverStart, loadStart) = (api.server.processorTime(), ownProcessorTime())
            let start = DispatchTime.now().uptimeNanoseconds
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in connected {
                    group.addTask { try await writer.push(pushesPerWriter) }
                }
                try await group.waitForAll()
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            let (serverEnd, loadEnd) = (api.server.processorTime(), ownProcessorTime())
            let groupsAfter = await api.groupCommits()
            for writer in connected { await writer.close() }
            let changes = Double(writers * pushesPerWriter * changesPerPush)
            return Rate(
                perSecond: changes / seconds,
                microseconds: serverEnd.flatMap { end in serverStart.map { (end - $0) / changes * 1e6 } },
                loadMicroseconds: (loadEnd - loadStart) / changes * 1e6,
                groups: groupsAfter.flatMap { after in groupsBefore.map { (after.since($0), seconds) } })
        } catch {
            for writer in connected { await writer.close() }
            throw error
        }
    }
}

extension Throughput {
    /// `throughput over 5 rounds, 100-change pushes over HTTP, 10 writers: 39.2, 41.5, 42.4, 42.8, 43.1% of
    /// raw (median 42.4%) | server 17.1–20.1 µs a change (median 17.4)`: the rounds of one phase,
    /// each a share of the raw floor around it and the server's processor time a change (when known).
    static func summary(
        of rounds: [(share: Double, microseconds: Double?)], batch: Int, transport: String, writers: Int
    ) -> String {
        func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return .nan }
            let middle = sorted.count / 2
            return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        }
        let shares = rounds.map(\.share)
        var text =
            String(
                format: "throughput over %d rounds, %3d-change pushes %@, %d writers: ", rounds.count, batch, transport,
                writers)
            + shares.sorted().map { String(format: "%.1f", $0) }.joined(separator: ", ")
            + String(format: "%% of raw (median %.1f%%)", median(shares))
        let microseconds = rounds.compactMap(\.microseconds)
        if let low = microseconds.min(), let high = microseconds.max() {
            text += String(format: " | server %.1f–%.1f µs a change (median %.1f)", low, high, median(microseconds))
        }
        return text
    }
}

extension Throughput {
    /// Changes per second from `writers` writers, each on its own layer of one document (of
    /// `layers`), sending their 1-change pushes through `apis` in turn (one node, or several).
    static func measureLayers(apis: [BenchAPI], layers: Int, writers: Int) async throws -> Double {
        let document = try await apis[0].newDocument()
        let pushesPerWriter = 200
        var tokens: [String] = []
        for writer in 0..<writers {
            let token = try await apis[0].server.token(
                document: document, layer: "l\(writer % layers)", user: "w", tokenID: "w\(writer)-\(UUID())")
            tokens.append(token)
            _ = try await apis[writer % apis.count].syncRevision(
                document: document, layer: "l\(writer % layers)", token: token,
                body: notePush(client: "w\(writer)", pushID: 1, base: 0, ids: ["warm-\(writer)"]))
        }
        let start = DispatchTime.now().uptimeNanoseconds
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                let (token, layer) = (tokens[writer], "l\(writer % layers)")
                group.addTask {
                    var base: Int64 = 0
                    for push in 0..<pushesPerWriter {
                        base = try await apis[(writer + push) % apis.count].syncRevision(
                            document: document, layer: layer, token: token,
                            body: notePush(
                                client: "w\(writer)", pushID: Int64(push + 2), base: base, ids: ["w\(writer)-\(push)"]))
                    }
                }
            }
            try await group.waitForAll()
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return Double(writers * pushesPerWriter) / seconds
    }
}

/// The floor: committing rows of the same size into SQLite directly, with the server's settings
/// (WAL, synchronous FULL).
enum RawSQLite {
    static func rate(rowsPerCommit: Int) throws -> Throughput.Rate {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("raw-\(UUID()).sqlite").path
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let pool = try DatabasePool(path: path)
        try SQLiteBackend.flushEveryCommit(of: pool)
        try pool.write { db in
            try db.execute(
                sql: "CREATE TABLE records (id TEXT PRIMARY KEY, revision INTEGER, content BLOB, updated_at REAL)")
        }
        let content = benchmarkNoteContent
        let commits = rowsPerCommit == 1 ? 20_000 : 1_000
        let processorStart = ownProcessorTime()
        let start = DispatchTime.now().uptimeNanoseconds
        for commit in 0..<commits {
            try pool.write { db in
                // Prepared once per connection, as the server's statements are: compiling the
                // statement for every row measured SQLite's parser more than its commits.
                let insert = try db.cachedStatement(
                    sql: "INSERT INTO records (id, revision, content, updated_at) VALUES (?, ?, ?, ?)")
                for row in 0..<rowsPerCommit {
                    try insert.execute(arguments: ["\(commit)-\(row)", commit, content, Date().timeIntervalSince1970])
                }
            }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let rows = Double(commits * rowsPerCommit)
        return Throughput.Rate(
            perSecond: rows / seconds, microseconds: (ownProcessorTime() - processorStart) / rows * 1e6)
    }
}

/// The processor time this process has used (user and system, all threads), in seconds.
func ownProcessorTime() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// A server's count of group transactions and of the commits they carried, from its `/metrics`
/// (`instant_group_commit_size_commits`).
struct GroupCommits {
    var count: Double
    var commits: Double

    /// The groups after `earlier`.
    func since(_ earlier: GroupCommits) -> GroupCommits {
        GroupCommits(count: count - earlier.count, commits: commits - earlier.commits)
    }

    /// Reads the histogram's `_count` and `_sum` from the Prometheus text of `/metrics`.
    init?(metrics text: String) {
        var count: Double?
        var commits: Double?
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let value = Double(parts[1]) else { continue }
            switch parts[0] {
            case "instant_group_commit_size_commits_count": count = value
            case "instant_group_commit_size_commits_sum": commits = value
            default: continue
            }
        }
        guard let count, let commits else { return nil }
        self.count = count
        self.commits = commits
    }

    init(count: Double, commits: Double) {
        self.count = count
        self.commits = commits
    }
}
