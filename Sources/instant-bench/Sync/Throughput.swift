import Foundation
import GRDB
import InstantJSON

/// Changes per second the server accepts from concurrent writers.
enum Throughput {
    /// Changes per second from `writers` writers pushing `changesPerPush` changes at a time to one
    /// layer, each on a connection of its own (``PushWriter``): over HTTP, or as sync requests on
    /// its listening WebSocket.
    static func measure(
        api: BenchAPI, over transport: PushWriter.Transport, writers: Int, changesPerPush: Int
    ) async throws -> Double {
        let document = try await api.newDocument()
        // About two seconds a phase on the reference machine: shorter phases (3,000 changes a
        // writer before 2026-11-26) moved by ±15% between runs of one binary.
        let pushesPerWriter = changesPerPush == 1 ? 2_000 : 150
        var connected: [PushWriter] = []
        do {
            for writer in 0..<writers {
                // A token per writer: the server limits the listening connections of one token.
                let token = try await api.server.token(document: document, user: "w")
                let pushes = PushWriter.Pushes(
                    documentID: document, token: token, client: "w\(writer)", changesPerPush: changesPerPush)
                connected.append(try await PushWriter.connect(to: api.server.baseURL, over: transport, pushes: pushes))
            }
            let start = DispatchTime.now().uptimeNanoseconds
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in connected {
                    group.addTask { try await writer.push(pushesPerWriter) }
                }
                try await group.waitForAll()
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            for writer in connected { await writer.close() }
            return Double(writers * pushesPerWriter * changesPerPush) / seconds
        } catch {
            for writer in connected { await writer.close() }
            throw error
        }
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
            let token = try await apis[0].server.token(document: document, layer: "l\(writer % layers)", user: "w")
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
    static func rate(rowsPerCommit: Int) throws -> Double {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("raw-\(UUID()).sqlite").path
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { db in
            try db.execute(
                sql: "CREATE TABLE records (id TEXT PRIMARY KEY, revision INTEGER, content BLOB, updated_at REAL)")
        }
        let content = benchmarkNoteContent
        let commits = rowsPerCommit == 1 ? 20_000 : 1_000
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
        return Double(commits * rowsPerCommit) / seconds
    }
}
