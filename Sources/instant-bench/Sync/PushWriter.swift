import Foundation
import InstantJSON
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// A writer of the throughput measures that lives on an event loop, as the load generators of HTTP
/// benchmarks (wrk) do: a channel handler reads each answer and sends the next push at once, with
/// no task, stream or switch between threads per push.
///
/// The benchmark's clients share the machine's cores with the server they measure, so their own
/// work lowers the server's figure. Writers built on AsyncHTTPClient and Hummingbird's WebSocket
/// client took more of the CPU than the server did (`perf record -a` during 1-change pushes on
/// WebSockets: 51% of the samples in the benchmark's threads, 35% in the server's).
///
/// Each push is what ``notePush(client:pushID:base:ids:)`` makes, from the revision the writer has:
/// over HTTP the revision of the last answer; on a WebSocket (`changes=records`) also of the
/// change messages that follow it, as the SDK does. Answers are read for their revision only, as
/// a client that leaves their records aside; a failed or rejected push fails the writer.
final class PushWriter: Sendable {
    enum Transport: Sendable {
        case http
        case webSocket
    }

    /// What one writer pushes, and where.
    struct Pushes: Sendable {
        var documentID: String
        /// The layer, or `nil` for the document's default layer.
        var layer: String?
        var token: String
        var client: String
        var changesPerPush: Int

        /// The body of push `pushID` from revision `base`.
        func body(pushID: Int64, base: Int64) -> JSONValue {
            let ids = (0..<changesPerPush).map { "\(client)-\(pushID)-\($0)" }
            return notePush(client: client, pushID: pushID, base: base, ids: ids)
        }
    }

    private let channel: any Channel
    private let handler: NIOLoopBound<any PushLoop>

    /// The one thread every writer runs on.
    private static let writerLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1).next()

    private init(channel: any Channel, handler: NIOLoopBound<any PushLoop>) {
        self.channel = channel
        self.handler = handler
    }

    /// Connects to the server at `server` and sends a first push, which opens the connection.
    static func connect(to server: URL, over transport: Transport, pushes: Pushes) async throws -> PushWriter {
        guard let host = server.host, let port = server.port else {
            throw BenchmarkError("The server's URL \(server) has no host and port.")
        }
        let loop = Self.writerLoop
        let ready = loop.makePromise(of: NIOLoopBound<any PushLoop>.self)
        let bootstrap = ClientBootstrap(group: loop).channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                switch transport {
                case .http:
                    let handler = HTTPPushHandler(host: "\(host):\(port)", pushes: pushes)
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(handler)
                    ready.succeed(NIOLoopBound(handler, eventLoop: channel.eventLoop))
                case .webSocket:
                    try WebSocketPushHandler.addUpgrade(
                        to: channel, host: "\(host):\(port)", pushes: pushes, ready: ready)
                }
            }
        }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: host, port: port).get()
        } catch {
            ready.fail(error)
            throw error
        }
        channel.closeFuture.whenComplete { _ in
            ready.fail(BenchmarkError("The writer's connection closed before it was ready."))
        }
        let writer = PushWriter(channel: channel, handler: try await ready.futureResult.get())
        try await writer.push(1)
        return writer
    }

    /// Sends `count` pushes one after the other, each once the one before was answered.
    func push(_ count: Int) async throws {
        let done = channel.eventLoop.makePromise(of: Void.self)
        let handler = self.handler
        channel.eventLoop.execute { handler.value.start(count: count, done: done) }
        try await done.futureResult.get()
    }

    func close() async {
        try? await channel.close()
    }
}

/// The pushes of one writer, in order: which to send next and what its answer did.
private struct PushSequence {
    let pushes: PushWriter.Pushes
    private var nextPushID: Int64 = 1
    /// The revision the writer has, as the server told it.
    var revision: Int64 = 0
    private var remaining = 0
    private var done: EventLoopPromise<Void>?
    /// Fails the writer when the pending push has no answer in time.
    private var deadline: Scheduled<Void>?
    /// Why the connection closed, once it did.
    private var closed: (any Error)?

    /// How long a push may wait for its answer.
    static let answerTimeout = TimeAmount.seconds(60)

    init(pushes: PushWriter.Pushes) {
        self.pushes = pushes
    }

    /// The id of the push waiting for its answer.
    var pendingPushID: Int64 { nextPushID - 1 }

    /// Starts `count` pushes; returns the body of the first.
    mutating func start(count: Int, done: EventLoopPromise<Void>) -> JSONValue? {
        guard self.done == nil else {
            done.fail(BenchmarkError("A writer was asked for pushes while it was still pushing."))
            return nil
        }
        if let closed {
            done.fail(closed)
            return nil
        }
        guard count > 0 else {
            done.succeed()
            return nil
        }
        self.done = done
        remaining = count
        return next()
    }

    /// The pending push was answered at `revision`; returns the body of the next push, or `nil`
    /// when the writer is done.
    mutating func answered(revision: Int64) -> JSONValue? {
        deadline?.cancel()
        deadline = nil
        self.revision = revision
        remaining -= 1
        guard remaining == 0 else { return next() }
        let done = self.done
        self.done = nil
        done?.succeed()
        return nil
    }

    /// The pending push went out on `loop`: `timedOut` runs if its answer has not come within
    /// ``answerTimeout``.
    mutating func sent(on loop: NIOIsolatedEventLoop, timedOut: @escaping () -> Void) {
        deadline?.cancel()
        deadline = loop.scheduleTask(in: Self.answerTimeout, timedOut)
    }

    /// The connection closed: the pending pushes fail, and so will any asked for later.
    mutating func close(because error: any Error) {
        closed = closed ?? error
        fail(error)
    }

    mutating func fail(_ error: any Error) {
        deadline?.cancel()
        deadline = nil
        let done = self.done
        self.done = nil
        done?.fail(error)
    }

    private mutating func next() -> JSONValue {
        defer { nextPushID += 1 }
        return pushes.body(pushID: nextPushID, base: revision)
    }
}

/// What ``PushWriter`` asks of its connection's handler, on the connection's event loop.
private protocol PushLoop: AnyObject {
    func start(count: Int, done: EventLoopPromise<Void>)
}

/// Pushes as `POST …/sync` requests on one kept-alive HTTP/1.1 connection.
private final class HTTPPushHandler: ChannelInboundHandler, PushLoop {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private var sequence: PushSequence
    private let head: HTTPRequestHead
    private var context: ChannelHandlerContext?
    private var status: HTTPResponseStatus = .ok
    private var answer = ByteBuffer()

    init(host: String, pushes: PushWriter.Pushes) {
        sequence = PushSequence(pushes: pushes)
        let layer = pushes.layer.map { "/l/\($0)" } ?? ""
        head = HTTPRequestHead(
            version: .http1_1, method: .POST, uri: "/i/d/\(pushes.documentID)\(layer)/sync",
            headers: [
                "Host": host, "Authorization": "Token token=\"\(pushes.token)\"", "Content-Type": "application/json",
            ])
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func start(count: Int, done: EventLoopPromise<Void>) {
        if let body = sequence.start(count: count, done: done) { send(body) }
    }

    private func send(_ push: JSONValue) {
        guard let context else { return }
        let body = ByteBuffer(string: push.serializedString())
        var head = self.head
        head.headers.add(name: "Content-Length", value: "\(body.readableBytes)")
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        sequence.sent(on: context.eventLoop.assumeIsolated()) { [self] in
            fail(BenchmarkError("Push \(sequence.pendingPushID) had no answer within 60 s."))
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = head.status
            answer.clear()
        case .body(var part):
            answer.writeBuffer(&part)
        case .end:
            guard status == .ok else {
                let text = String(buffer: answer).prefix(300)
                fail(BenchmarkError("Push \(sequence.pendingPushID) got \(status.code): \(text)"))
                return
            }
            do {
                let revision = try SyncAnswerHead.revision(of: answer.readableBytesView)
                if let body = sequence.answered(revision: revision) { send(body) }
            } catch {
                fail(error)
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        sequence.close(because: BenchmarkError("The server closed a writer's HTTP connection."))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error)
    }

    private func fail(_ error: any Error) {
        sequence.fail(error)
        context?.close(promise: nil)
    }
}

/// Pushes as sync requests on a listening WebSocket, `{"requestId":N,"sync":{…}}`, answered on it
/// by `{"requestId":N,"answer":{…}}`.
private final class WebSocketPushHandler: ChannelInboundHandler, PushLoop {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private var sequence: PushSequence
    private var context: ChannelHandlerContext?
    /// The text message being received, over one or more frames.
    private var message = ByteBuffer()
    private var receivingText = false

    init(pushes: PushWriter.Pushes) {
        sequence = PushSequence(pushes: pushes)
    }

    /// Sets up `channel` to open the listening WebSocket of `pushes`' document (an HTTP upgrade)
    /// and to push on it once open; `ready` gets the handler then.
    static func addUpgrade(
        to channel: any Channel, host: String, pushes: PushWriter.Pushes,
        ready: EventLoopPromise<NIOLoopBound<any PushLoop>>
    ) throws {
        let upgrader = NIOWebSocketClientUpgrader(maxFrameSize: 1 << 24) { channel, _ in
            channel.eventLoop.makeCompletedFuture {
                let handler = WebSocketPushHandler(pushes: pushes)
                try channel.pipeline.syncOperations.addHandler(handler)
                ready.succeed(NIOLoopBound(handler, eventLoop: channel.eventLoop))
            }
        }
        let layer = pushes.layer.map { "/l/\($0)" } ?? ""
        let request = UpgradeRequest(
            host: host,
            path: "/i/d/\(pushes.documentID)\(layer)/listen?since=0&changes=records&jwt=\(pushes.token)",
            ready: ready)
        try channel.pipeline.syncOperations.addHTTPClientHandlers(
            withClientUpgrade: (
                upgraders: [upgrader],
                completionHandler: { context in
                    context.pipeline.removeHandler(name: UpgradeRequest.name, promise: nil)
                }
            ))
        try channel.pipeline.syncOperations.addHandler(request, name: UpgradeRequest.name)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func start(count: Int, done: EventLoopPromise<Void>) {
        if let body = sequence.start(count: count, done: done) { send(body) }
    }

    private func send(_ push: JSONValue) {
        guard let context else { return }
        let message: JSONValue = ["requestId": .integer(sequence.pendingPushID), "sync": push]
        let text = ByteBuffer(string: message.serializedString())
        context.writeAndFlush(
            wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: text)), promise: nil)
        sequence.sent(on: context.eventLoop.assumeIsolated()) { [self] in
            fail(BenchmarkError("Push \(sequence.pendingPushID) had no answer on its WebSocket within 60 s."))
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            message.clear()
            receivingText = true
            fallthrough
        case .continuation:
            guard receivingText else { return }
            message.writeBuffer(&frame.data)
            if frame.fin {
                receivingText = false
                received(message.readableBytesView)
            }
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.data)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            fail(BenchmarkError("The server closed a writer's WebSocket."))
        default:
            break
        }
    }

    /// An answer brings the writer to its revision; a change message that follows the writer's
    /// revision brings it to its own. Messages come in the order the server sent them.
    private func received(_ text: ByteBufferView) {
        if text.starts(with: #"{"requestId":"#.utf8) {
            let prefix = #"{"requestId":\#(sequence.pendingPushID),"answer":"#.utf8
            guard text.starts(with: prefix) else {
                fail(
                    BenchmarkError("A push on a WebSocket failed: \(String(decoding: text.prefix(300), as: UTF8.self))")
                )
                return
            }
            do {
                let revision = try SyncAnswerHead.revision(of: text.dropFirst(prefix.count))
                if let body = sequence.answered(revision: revision) { send(body) }
            } catch {
                fail(error)
            }
        } else if let (since, next) = Self.changeMessageRevisions(text), sequence.revision == since {
            sequence.revision = next
        }
    }

    /// `since` and `revision` of a change message, `{"revision":M,"since":L,"records":[...]}`.
    private static func changeMessageRevisions(_ text: ByteBufferView) -> (since: Int64, revision: Int64)? {
        let head = text.prefix(64)
        let revisionKey = #"{"revision":"#.utf8
        guard head.starts(with: revisionKey) else { return nil }
        let revisionDigits = head.dropFirst(revisionKey.count).prefix { $0 != UInt8(ascii: ",") }
        let sinceKey = #","since":"#.utf8
        let rest = head.dropFirst(revisionKey.count + revisionDigits.count)
        guard rest.starts(with: sinceKey),
            let revision = Int64(String(decoding: revisionDigits, as: UTF8.self)),
            let since = Int64(
                String(decoding: rest.dropFirst(sinceKey.count).prefix { $0 != UInt8(ascii: ",") }, as: UTF8.self))
        else { return nil }
        return (since, revision)
    }

    func channelInactive(context: ChannelHandlerContext) {
        sequence.close(because: BenchmarkError("The server closed a writer's WebSocket connection."))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error)
    }

    private func fail(_ error: any Error) {
        sequence.fail(error)
        context?.close(promise: nil)
    }
}

/// Sends the HTTP request that asks for the WebSocket once connected (the upgrade handler adds its
/// headers), and leaves the pipeline once the upgrade is done.
private final class UpgradeRequest: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    /// Its name in the pipeline.
    static let name = "upgrade-request"

    private let host: String
    private let path: String
    private let ready: EventLoopPromise<NIOLoopBound<any PushLoop>>

    init(host: String, path: String, ready: EventLoopPromise<NIOLoopBound<any PushLoop>>) {
        self.host = host
        self.path = path
        self.ready = ready
    }

    func channelActive(context: ChannelHandlerContext) {
        let head = HTTPRequestHead(
            version: .http1_1, method: .GET, uri: path, headers: ["Host": host, "Content-Length": "0"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // The server refused the upgrade: its answer is the only HTTP response on this connection.
        if case .head(let head) = unwrapInboundIn(data) {
            ready.fail(BenchmarkError("The server refused a writer's WebSocket: \(head.status.code)."))
            context.close(promise: nil)
        }
    }
}
