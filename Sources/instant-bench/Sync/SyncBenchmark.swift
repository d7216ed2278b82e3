import ArgumentParser
import AsyncHTTPClient
import Foundation
import GRDB
import InstantJSON
import InstantTesting
import NIOCore
import NIOHTTP1

/// Load on the sync server: propagation latency to listeners, push throughput, idle listeners.
struct SyncBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Sync server latency, throughput and listener memory.",
        discussion: """
            Starts `instant serve` (release build beside instant-bench) in a temporary directory, or \
            uses a running one with --server and --data-dir (its development credentials).
            """
    )

    @Option(help: "The base URL of a running server (default: start one).")
    var server: String?
    @Option(help: "The data directory of the running server (for its development key and API token).")
    var dataDir: String?
    @Option(help: "The process id of the running server (for its memory).")
    var serverPID: Int32?
    @Option(parsing: .upToNextOption, help: "Listener counts for the propagation latency.")
    var listeners: [Int] = [1, 100, 1000]
    @Option(help: "Pushes timed per listener count.")
    var rounds = 200
    @Option(
        parsing: .upToNextOption,
        help: "Listener counts for the latency until every listener applied a change (records against pokes).")
    var applying: [Int] = [100, 1000]
    @Option(help: "Pushes timed per listener count and mode when every listener applies.")
    var applyingRounds = 100
    @Flag(help: "Measure only the latency until every listener applied a change.")
    var applyingOnly = false
    @Flag(help: "Measure only the push throughput (for profiling the server's push path).")
    var throughputOnly = false
    @Option(parsing: .upToNextOption, help: "Changes per push for the throughput.")
    var changesPerPush: [Int] = [1, 100]
    @Option(help: "Concurrent writers for the throughput.")
    var writers = 10
    @Option(
        help: """
            Times each throughput phase runs, one after the other; above 1, a summary line per phase \
            gives the median share of the raw floor and of the server's processor time a change (one \
            run moves by ±15% on a machine of 2 cores).
            """)
    var throughputRounds = 1
    @Option(help: "Idle listening WebSockets for the memory figure (0 skips it).")
    var idle = 10_000
    @Flag(
        help: """
            Run against PostgreSQL instead: starts a PostgreSQL server of its own (fsync on) and two \
            `instant serve` nodes on it, and measures propagation within a node and across nodes, push \
            throughput against PostgreSQL's own commit rate, and one node against two on ten layers.
            """)
    var postgres = false

    func run() async throws {
        if postgres {
            try await PostgresSync.run(listeners: listeners, rounds: rounds, writers: writers)
            return
        }
        let target: ServerUnderTest
        if let server {
            guard let url = URL(string: server), let dataDir else {
                throw ValidationError("--server needs a URL and --data-dir the server's data directory.")
            }
            target = try await ServerUnderTest.connect(
                url, dataDirectory: URL(fileURLWithPath: dataDir), processID: serverPID)
        } else {
            // The writer's own WebSocket (pushes on the socket) listens beside the largest count of
            // listeners, one more than the default per-layer limit at 1,000.
            let mostListeners = (applying + listeners).max() ?? 0
            target = try await ServerUnderTest.start(arguments: [
                "--max-listeners-per-layer", "\(max(1000, mostListeners + 1))",
            ])
        }
        defer { target.stop() }
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(16, writers * 2))
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            try await measure(BenchAPI(http: http, server: target))
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }

    private func measure(_ api: BenchAPI) async throws {
        let target = api.server
        print("server \(target.baseURL), \(ProcessInfo.processInfo.activeProcessorCount) cores")

        for count in throughputOnly ? [] : applying {
            for mode in EveryListenerApplies.Mode.allCases {
                let result = try await EveryListenerApplies.measure(
                    api: api, mode: mode, listeners: count, rounds: applyingRounds)
                print(
                    String(format: "every listener applies, %5d listeners, ", count) + mode.rawValue
                        + String(
                            format:
                                ": each p50 %.3f ms p99 %.3f ms | all applied p50 %.3f ms p99 %.3f ms | %d pulls "
                                + "| the writer's push p50 %.3f ms p99 %.3f ms",
                            result.each.p50, result.each.p99, result.last.p50, result.last.p99, result.pulls,
                            result.push.p50, result.push.p99))
            }
        }
        if applyingOnly { return }

        if !throughputOnly {
            let floor = try await WebSocketEcho.roundTrips(count: 2_000)
            print(String(format: "raw WebSocket echo on loopback: p50 %.3f ms, p99 %.3f ms", floor.p50, floor.p99))
        }

        for count in throughputOnly ? [] : listeners {
            let result = try await Propagation.measure(api: api, listeners: count, rounds: rounds)
            print(
                String(
                    format:
                        "propagation, %5d listeners: poke p50 %.3f ms p99 %.3f ms | applied by B p50 %.3f ms p99 %.3f ms",
                    count, result.poke.p50, result.poke.p99, result.applied.p50, result.applied.p99))
        }

        let transports = [(PushWriter.Transport.http, "over HTTP"), (.webSocket, "on WebSockets")]
        for batch in changesPerPush {
            var rounds: [[(share: Double, microseconds: Double?)]] = Array(repeating: [], count: transports.count)
            // The floor before, between and after the phases: each phase against the two around it.
            var before = try RawSQLite.rate(rowsPerCommit: batch)
            for _ in 0..<max(throughputRounds, 1) {
                for (position, (transport, name)) in transports.enumerated() {
                    let rate = try await Throughput.measure(
                        api: api, over: transport, writers: writers, changesPerPush: batch)
                    let after = try RawSQLite.rate(rowsPerCommit: batch)
                    defer { before = after }
                    let raw = Throughput.Rate.around(before: before, after: after)
                    rounds[position].append((rate.perSecond / raw.perSecond * 100, rate.microseconds))
                    print(
                        String(
                            format: "throughput, %3d-change pushes %@, %d writers: %.0f changes/s "
                                + "(raw SQLite %.0f rows/s, %.0f before and %.0f after: %.0f%%)",
                            batch, name, writers, rate.perSecond, raw.perSecond, before.perSecond, after.perSecond,
                            rate.perSecond / raw.perSecond * 100)
                            + rate.processorCost(against: raw, floor: "raw SQLite") + rate.groupShape())
                }
            }
            guard throughputRounds > 1 else { continue }
            for (position, (_, name)) in transports.enumerated() {
                print(Throughput.summary(of: rounds[position], batch: batch, transport: name, writers: writers))
            }
        }

        if idle > 0 && !throughputOnly {
            let memory = try await IdleListeners.measure(api: api, count: idle)
            let unsettled =
                memory.unsettled == 0
                ? "" : ", \(memory.unsettled) neither open nor failed after \(IdleListeners.stall)"
            print(
                "idle listeners: \(memory.open) open\(unsettled), "
                    + String(
                        format: "server RSS %.1f MiB before, %.1f MiB with them (%.1f KiB each)",
                        memory.before / 1_048_576, memory.after / 1_048_576,
                        (memory.after - memory.before) / Double(max(1, memory.open)) / 1024))
        }
    }
}

/// The calls the benchmarks make, over one HTTP client.
struct BenchAPI: Sendable {
    let http: HTTPClient
    let server: ServerUnderTest

    /// Uploads a small PDF and returns its document id.
    func newDocument() async throws -> String {
        let reply = try await send(
            .POST, "/api/documents", body: TestPDF.make(pageCount: 1, seed: Int.random(in: 0..<1_000_000_000)),
            authorization: "Token token=\"\(server.apiToken)\"", contentType: "application/pdf")
        guard let id = reply["data"]?["document_id"]?.stringValue else {
            throw BenchmarkError("Upload failed: \(reply)")
        }
        return id
    }

    /// One sync request; a push the server rejects (in part) stops the benchmark, which would
    /// otherwise wait for a revision that never comes or count changes that were not accepted.
    func sync(document: String, token: String, body: String) async throws -> JSONValue {
        let reply = try await send(
            .POST, "/i/d/\(document)/sync", body: Data(body.utf8), authorization: "Token token=\"\(token)\"",
            contentType: "application/json")
        if let rejected = reply["rejected"]?.arrayValue, let first = rejected.first {
            throw BenchmarkError("The server rejected \(rejected.count) change(s) of a push: \(first)")
        }
        return reply
    }

    /// One sync request whose answer is read only for its revision: the writers of the throughput
    /// benchmark leave the answers' records aside, so that the figure is the server's work.
    func syncRevision(document: String, layer: String? = nil, token: String, body: String) async throws -> Int64 {
        let path = layer.map { "/i/d/\(document)/l/\($0)/sync" } ?? "/i/d/\(document)/sync"
        let bytes = try await sendRaw(
            .POST, path, body: Data(body.utf8), authorization: "Token token=\"\(token)\"",
            contentType: "application/json")
        return try SyncAnswerHead.revision(of: bytes.readableBytesView)
    }

    func send(_ method: HTTPMethod, _ path: String, body: Data, authorization: String, contentType: String)
        async throws -> JSONValue
    {
        try JSONValue(
            parsing: Data(
                buffer: try await sendRaw(
                    method, path, body: body, authorization: authorization, contentType: contentType)))
    }

    /// The server's group transactions so far (``GroupCommits``); `nil` when `/metrics` does not
    /// answer with them (a server of another kind): the figure is then left out.
    func groupCommits() async -> GroupCommits? {
        let request = HTTPClientRequest(url: server.baseURL.absoluteString + "/metrics")
        guard let response = try? await http.execute(request, timeout: .seconds(10)), response.status == .ok,
            let bytes = try? await response.body.collect(upTo: 4 << 20)
        else { return nil }
        return GroupCommits(metrics: String(buffer: bytes))
    }

    func sendRaw(_ method: HTTPMethod, _ path: String, body: Data, authorization: String, contentType: String)
        async throws -> ByteBuffer
    {
        var request = HTTPClientRequest(url: server.baseURL.absoluteString + path)
        request.method = method
        request.headers.add(name: "Authorization", value: authorization)
        request.headers.add(name: "Content-Type", value: contentType)
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await http.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        guard response.status == .ok else {
            throw BenchmarkError("\(method) \(path): \(response.status) \(String(buffer: bytes))")
        }
        return bytes
    }
}

/// The start of a sync answer, `{"revision":R,"reset":…,"pushId":…,"rejected":[],…`, read without
/// parsing the records after it.
enum SyncAnswerHead {
    /// The answer's revision; throws when the answer does not start as a sync answer or rejected
    /// changes of its push (a benchmark counting pushes must not count those). Reads bytes, not a
    /// `String`: the throughput's writers read thousands of answers a second.
    static func revision(of answer: some Collection<UInt8>) throws -> Int64 {
        let head = Array(answer.prefix(96))
        func text() -> String { String(decoding: head, as: UTF8.self) }
        let accepted = Array(#""rejected":[],"#.utf8)
        guard head.count >= accepted.count,
            (0...(head.count - accepted.count)).contains(where: {
                head[$0..<($0 + accepted.count)].elementsEqual(accepted)
            })
        else {
            throw BenchmarkError("The server rejected changes of a push: \(text())…")
        }
        let prefix = #"{"revision":"#.utf8
        guard head.starts(with: prefix) else {
            throw BenchmarkError("A sync answer does not start with its revision: \(text())…")
        }
        var value: Int64 = 0
        var digits = 0
        for byte in head.dropFirst(prefix.count) {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 18 else { break }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            digits += 1
        }
        guard digits > 0 else { throw BenchmarkError("A sync answer does not start with its revision: \(text())…") }
        return value
    }
}

/// The note every benchmark push puts, as Instant JSON.
private let benchmarkNote: JSONValue = [
    "v": 2, "type": "pspdfkit/note", "pageIndex": 0, "bbox": [10, 20, 30, 40], "icon": "comment",
    "text": ["format": "plain", "value": "benchmark"],
]

/// The content of one note of ``notePush(client:pushID:base:ids:)``, serialized: the row the raw
/// commit rates write.
let benchmarkNoteContent = benchmarkNote.serialized()

/// A put of the note, up to its id: `{"op":"put",…,"id":`.
private let notePut =
    #"{"op":"put","kind":"annotation","content":\#(String(decoding: benchmarkNoteContent, as: UTF8.self)),"id":"#

/// The body of a push of notes, one per id, as JSON text. Written as text rather than built as a
/// ``JSONValue`` and serialized: the throughput's writers send thousands a second from one thread
/// that shares the machine's cores with the server they measure.
func notePush(client: String, pushID: Int64, base: Int64, ids: [String]) -> String {
    var text = #"{"clientId":\#(JSONValue.string(client).serializedString()),"pushId":\#(pushID),"#
    text += #""baseRevision":\#(base),"changes":["#
    for (index, id) in ids.enumerated() {
        if index > 0 { text += "," }
        text += notePut + JSONValue.string(id).serializedString() + "}"
    }
    return text + "]}"
}

/// Percentiles of samples in milliseconds.
struct Percentiles {
    var p50: Double
    var p99: Double

    init(_ samples: [Double]) {
        let sorted = samples.sorted()
        func at(_ fraction: Double) -> Double {
            sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
        }
        p50 = at(0.5)
        p99 = at(0.99)
    }
}
