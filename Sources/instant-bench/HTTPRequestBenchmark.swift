import ArgumentParser
import Foundation
import Hummingbird
import InstantServer
import InstantTesting
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix

/// What one HTTP request costs a server before any work of its own: a bare Hummingbird route in a
/// process of its own, against `instant serve` answering a path it does not know (its connection
/// guards, its middleware and an error body, no storage). Both are measured the same way: keep-alive
/// connections, each sending its next request as soon as the answer before came, and the
/// processor time each server's process used per request (from /proc).
///
/// The sync benchmark's pushes over HTTP cost the server this and their own work; its pushes on a
/// WebSocket cost no request.
struct HTTPRequestBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "http",
        abstract: "The server's processor time per HTTP request: a bare Hummingbird route against instant's.",
        discussion: """
            Starts this executable again as a bare Hummingbird server (one route, GET / answering \
            "ok", NIO's singleton threads as Swift's global executor as in `instant`), and `instant \
            serve` (release build beside instant-bench) in a temporary directory; then sends each \
            the same GET requests on keep-alive connections and reports requests a second and the \
            server's processor time a request.
            """
    )

    @Option(help: "Keep-alive connections sending requests at once.")
    var connections = 10
    @Option(help: "Requests each connection sends.")
    var requests = 2_000
    @Option(help: .hidden)
    var bareServerPort: Int?

    func validate() throws {
        guard (1...1_000).contains(connections) else { throw ValidationError("--connections must be 1 to 1000.") }
        guard (1...1_000_000).contains(requests) else { throw ValidationError("--requests must be 1 to 1000000.") }
    }

    func run() async throws {
        if let bareServerPort { return try await Self.serveBare(port: bareServerPort) }
        print("\(ProcessInfo.processInfo.activeProcessorCount) cores")
        // One server at a time: the other is stopped before the next starts.
        do {
            let bare = try await BareServer.start()
            defer { bare.stop() }
            report(
                "bare Hummingbird, GET /",
                try await measure(port: bare.port, path: "/", answered: .ok, process: bare.processID))
        }
        let server = try await ServerUnderTest.start()
        defer { server.stop() }
        guard let port = server.baseURL.port else { throw BenchmarkError("The server's URL has no port.") }
        report(
            "instant, GET of an unknown path (404)",
            try await measure(port: port, path: "/no-such-route", answered: .notFound, process: server.processID))
    }

    private func report(_ name: String, _ rate: Rate) {
        print(
            String(
                format:
                    "http, %@, %d connections: %.0f requests/s | processor time a request: server %.1f µs, load generator %.1f µs",
                name, connections, rate.perSecond, rate.serverMicroseconds, rate.loadMicroseconds))
    }

    struct Rate {
        var perSecond: Double
        var serverMicroseconds: Double
        var loadMicroseconds: Double
    }

    /// Sends `requests` GET requests of `path` on each of `connections` connections to the server
    /// on `port`, whose process is `process`; each answer must have the status `answered`.
    private func measure(port: Int, path: String, answered: HTTPResponseStatus, process: Int32?) async throws
        -> Rate
    {
        guard let process else { throw BenchmarkError("The server's process id is unknown.") }
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        var channels: [RequestLoop.Connection] = []
        defer { for (channel, _) in channels { channel.close(promise: nil) } }
        for _ in 0..<connections {
            channels.append(try await RequestLoop.connect(port: port, path: path, answered: answered, on: loop))
        }
        // One round first: the connections are accepted and the routes warm.
        try await Self.send(1, on: channels)
        let serverStart = ServerUnderTest.processorTime(ofProcess: process)
        let loadStart = ownProcessorTime()
        let start = DispatchTime.now().uptimeNanoseconds
        try await Self.send(requests, on: channels)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        guard let serverStart, let serverEnd = ServerUnderTest.processorTime(ofProcess: process) else {
            throw BenchmarkError("The server's processor time could not be read from /proc.")
        }
        let total = Double(connections * requests)
        return Rate(
            perSecond: total / seconds, serverMicroseconds: (serverEnd - serverStart) / total * 1e6,
            loadMicroseconds: (ownProcessorTime() - loadStart) / total * 1e6)
    }

    private static func send(_ count: Int, on channels: [RequestLoop.Connection]) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (channel, handler) in channels {
                group.addTask {
                    let done = channel.eventLoop.makePromise(of: Void.self)
                    channel.eventLoop.execute { handler.value.start(count: count, done: done) }
                    try await done.futureResult.get()
                }
            }
            try await group.waitForAll()
        }
    }

    /// Serves the bare route on `port` (0 for any) and prints `listening on PORT` once it does,
    /// until the process is stopped.
    private static func serveBare(port: Int) async throws {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        let router = Router()
        router.get("/") { _, _ in "ok" }
        var logger = Logger(label: "bare")
        logger.logLevel = .error
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
            onServerRunning: { channel in
                // Unbuffered: the parent reads the line while this process runs.
                FileHandle.standardOutput.write(Data("listening on \(channel.localAddress?.port ?? 0)\n".utf8))
            }, logger: logger)
        try await app.runService()
    }
}

/// The bare Hummingbird server: this executable again, with the hidden `--bare-server-port 0`.
private struct BareServer {
    let process: ChildProcess
    let port: Int

    var processID: Int32 { process.processIdentifier }

    static func start() async throws -> BareServer {
        let (process, output) = try await ChildProcess.start(
            try ServeProcess.executable(named: "instant-bench").path, ["http", "--bare-server-port", "0"],
            readyWhen: "listening on [0-9]+\n")
        // The line is whole once its newline came (a read may stop in the middle of the number).
        guard let port = output.split(separator: " ").last.flatMap({ Int($0.dropLast()) }) else {
            await process.kill()
            throw BenchmarkError("The bare Hummingbird server printed no port: \(output)")
        }
        return BareServer(process: process, port: port)
    }

    func stop() {
        process.stopBlocking()
    }
}

/// One keep-alive connection's requests: sends the next GET as soon as the answer before ended;
/// an answer with another status than the one expected, or none within ``answerTimeout``, fails
/// the measure.
private final class RequestLoop: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let head: HTTPRequestHead
    private let expected: HTTPResponseStatus
    private var context: ChannelHandlerContext?
    private var remaining = 0
    private var done: EventLoopPromise<Void>?
    /// Fails the measure when the pending request has no answer in time.
    private var deadline: Scheduled<Void>?

    /// How long a request may wait for its answer (as a push of the sync benchmark).
    static let answerTimeout = TimeAmount.seconds(60)

    private init(host: String, path: String, expected: HTTPResponseStatus) {
        head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: ["Host": host])
        self.expected = expected
    }

    /// A connection and its requests' handler.
    typealias Connection = (channel: any Channel, handler: NIOLoopBound<RequestLoop>)

    static func connect(port: Int, path: String, answered: HTTPResponseStatus, on loop: any EventLoop) async throws
        -> Connection
    {
        let ready = loop.makePromise(of: NIOLoopBound<RequestLoop>.self)
        let bootstrap = ClientBootstrap(group: loop).channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                let handler = RequestLoop(host: "127.0.0.1:\(port)", path: path, expected: answered)
                try channel.pipeline.syncOperations.addHTTPClientHandlers()
                try channel.pipeline.syncOperations.addHandler(handler)
                ready.succeed(NIOLoopBound(handler, eventLoop: channel.eventLoop))
            }
        }
        do {
            let channel = try await bootstrap.connect(host: "127.0.0.1", port: port).get()
            return (channel, try await ready.futureResult.get())
        } catch {
            ready.fail(error)
            throw error
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func start(count: Int, done: EventLoopPromise<Void>) {
        guard context?.channel.isActive == true else {
            return done.fail(BenchmarkError("A connection closed before its requests were sent."))
        }
        remaining = count
        self.done = done
        sendNext()
    }

    private func sendNext() {
        guard let context else { return }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        deadline?.cancel()
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: Self.answerTimeout) { [self] in
            fail(BenchmarkError("\(head.uri) had no answer within 60 s."))
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let answer) where answer.status != expected:
            return fail(BenchmarkError("\(head.uri) was answered \(answer.status.code), not \(expected.code)."))
        case .head, .body:
            return
        case .end:
            break
        }
        deadline?.cancel()
        deadline = nil
        remaining -= 1
        if remaining > 0 {
            sendNext()
        } else {
            done?.succeed()
            done = nil
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(BenchmarkError("The server closed a connection before its requests were answered."))
    }

    /// Fails the pending requests and closes the connection.
    private func fail(_ error: any Error) {
        deadline?.cancel()
        deadline = nil
        done?.fail(error)
        done = nil
        context?.close(promise: nil)
    }
}
