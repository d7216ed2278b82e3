import Foundation
import GRDB
import InstantJSON
import Synchronization

/// Changes per second the server accepts from concurrent writers.
enum Throughput {
    static func measure(api: BenchAPI, writers: Int, changesPerPush: Int) async throws -> Double {
        let document = try await api.newDocument()
        let token = try await api.server.token(document: document, user: "w")
        let pushesPerWriter = changesPerPush == 1 ? 1_000 : 30
        // One warm-up push per writer opens its connection.
        for writer in 0..<writers {
            _ = try await api.sync(
                document: document, token: token,
                body: notePush(client: "w\(writer)", pushID: 1, base: 0, ids: ["warm-\(writer)"]))
        }
        let start = DispatchTime.now().uptimeNanoseconds
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var base: Int64 = 0
                    for push in 0..<pushesPerWriter {
                        let ids = (0..<changesPerPush).map { "w\(writer)-\(push)-\($0)" }
                        base = try await api.syncRevision(
                            document: document, token: token,
                            body: notePush(client: "w\(writer)", pushID: Int64(push + 2), base: base, ids: ids))
                    }
                }
            }
            try await group.waitForAll()
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return Double(writers * pushesPerWriter * changesPerPush) / seconds
    }
}

extension Throughput {
    /// As ``measure(api:writers:changesPerPush:)``, each writer sending its pushes on a listening
    /// WebSocket of its own (`changes=records`) and reading their answers there. As the SDK does, a
    /// writer's revision moves with its answers and with the change messages that follow it (their
    /// records are left aside, as the HTTP writers leave their answers' records), and each push
    /// asks the changes after it.
    static func measureOnSockets(api: BenchAPI, writers: Int, changesPerPush: Int) async throws -> Double {
        let document = try await api.newDocument()
        let pushesPerWriter = changesPerPush == 1 ? 1_000 : 30
        var writerSockets: [SocketWriter] = []
        for writer in 0..<writers {
            // A token per writer: the server limits the listening connections of one token.
            let token = try await api.server.token(document: document, user: "w")
            let url =
                api.server.baseURL.absoluteString.replacingOccurrences(of: "http://", with: "ws://")
                + "/i/d/\(document)/listen?since=0&changes=records&jwt=\(token)"
            let socket = SocketWriter(url: url, writer: writer)
            writerSockets.append(socket)
            // One warm-up push per writer opens its connection.
            try await socket.push(pushID: 1, ids: ["warm-\(writer)"])
        }
        defer { for socket in writerSockets { socket.socket.stop() } }
        let start = DispatchTime.now().uptimeNanoseconds
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (writer, socket) in writerSockets.enumerated() {
                group.addTask {
                    for push in 0..<pushesPerWriter {
                        try await socket.push(
                            pushID: Int64(push + 2), ids: (0..<changesPerPush).map { "w\(writer)-\(push)-\($0)" })
                    }
                }
            }
            try await group.waitForAll()
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        for socket in writerSockets { await socket.socket.close() }
        return Double(writers * pushesPerWriter * changesPerPush) / seconds
    }

    /// A writer living on its listening WebSocket.
    private final class SocketWriter: Sendable {
        let socket: Listener
        let writer: Int
        private let answers: AsyncStream<String>
        /// The revision the writer has, as the server told it.
        private let revision = Told()

        init(url: String, writer: Int) {
            self.writer = writer
            let (answers, answered) = AsyncStream<String>.makeStream()
            self.answers = answers
            let revision = self.revision
            socket = Listener(
                url: url,
                onText: { text, _ in
                    // Messages come in the order the server told them: an answer brings the writer
                    // to its revision, a change message that follows the writer's revision to its own.
                    if text.hasPrefix(#"{"requestId":"#) {
                        if let start = text.utf8.firstRange(of: #""answer":"#.utf8)?.upperBound,
                            let told = try? SyncAnswerHead.revision(of: text.utf8[start...])
                        {
                            revision.value.withLock { $0 = told }
                        }
                        answered.yield(text)
                    } else if let (since, next) = Self.changeMessageRevisions(text) {
                        revision.value.withLock { if $0 == since { $0 = next } }
                    }
                },
                onFailure: { _ in answered.finish() })
        }

        /// Sends one push from the writer's revision and waits for its answer.
        func push(pushID: Int64, ids: [String]) async throws {
            let base = revision.value.withLock { $0 }
            let body = notePush(client: "w\(writer)", pushID: pushID, base: base, ids: ids)
            socket.send(JSONValue.object(["requestId": .integer(pushID), "sync": body]).serializedString())
            var iterator = answers.makeAsyncIterator()
            guard let answer = await iterator.next() else {
                throw BenchmarkError("Writer \(writer)'s WebSocket closed.")
            }
            let prefix = #"{"requestId":\#(pushID),"answer":"#
            guard answer.hasPrefix(prefix) else {
                throw BenchmarkError("A push on a WebSocket failed: \(answer.prefix(300))")
            }
            _ = try SyncAnswerHead.revision(of: answer.utf8.dropFirst(prefix.utf8.count))
        }

        /// A revision shared by the socket's reader and the pushes.
        private final class Told: Sendable {
            let value = Mutex<Int64>(0)
        }

        /// `since` and `revision` of a change message, `{"revision":M,"since":L,"records":[...]}`.
        private static func changeMessageRevisions(_ text: String) -> (since: Int64, revision: Int64)? {
            let head = text.utf8.prefix(64)
            guard head.starts(with: #"{"revision":"#.utf8),
                let comma = head.firstIndex(of: UInt8(ascii: ",")),
                let revision = Int64(
                    String(decoding: head[head.index(head.startIndex, offsetBy: 12)..<comma], as: UTF8.self)),
                head[comma...].starts(with: #","since":"#.utf8)
            else { return nil }
            let sinceStart = head.index(comma, offsetBy: 9)
            let sinceDigits = head[sinceStart...].prefix { $0 != UInt8(ascii: ",") }
            guard let since = Int64(String(decoding: sinceDigits, as: UTF8.self)) else { return nil }
            return (since, revision)
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
        let commits = rowsPerCommit == 1 ? 2_000 : 200
        let start = DispatchTime.now().uptimeNanoseconds
        for commit in 0..<commits {
            try pool.write { db in
                for row in 0..<rowsPerCommit {
                    try db.execute(
                        sql: "INSERT INTO records (id, revision, content, updated_at) VALUES (?, ?, ?, ?)",
                        arguments: ["\(commit)-\(row)", commit, content, Date().timeIntervalSince1970]
                            as StatementArguments)
                }
            }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return Double(commits * rowsPerCommit) / seconds
    }
}
