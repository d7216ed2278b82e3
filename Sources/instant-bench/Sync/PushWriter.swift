import Foundation
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
/// client took half as much CPU per push as the server (`perf record -a` during 1-change pushes on
/// WebSockets: 29% of the samples in the benchmark's threads, 57% in the server's).
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

        /// The body of push `pushID` from revision `base`, as JSON text.
        func body(pushID: Int64, base: Int64) -> String {
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
                    let handler = PushHandler(
                        wire: HTTPPushWire(host: "\(host):\(port)", pushes: pushes), pushes: pushes)
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(handler)
                    ready.succeed(NIOLoopBound(handler, eventLoop: channel.eventLoop))
                case .webSocket:
                    try WebSocketPushWire.addUpgrade(
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
    mutating func start(count: Int, done: EventLoopPromise<Void>) -> String? {
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
    mutating func answered(revision: Int64) -> String? {
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

    /// The pending pushes fail with `error`; between pushes, the next ones will.
    mutating func fail(_ error: any Error) {
        deadline?.cancel()
        deadline = nil
        guard let done else {
            closed = closed ?? error
            return
        }
        self.done = nil
        done.fail(error)
    }

    private mutating func next() -> String {
        defer { nextPushID += 1 }
        return pushes.body(pushID: nextPushID, base: revision)
    }
}

/// What ``PushWriter`` asks of its connection's handler, on the connection's event loop.
private protocol PushLoop: AnyObject {
    func start(count: Int, done: EventLoopPromise<Void>)
}

/// What an incoming message of the server says to a writer.
private enum Heard<Reply> {
    /// The answer to the pending push, at this revision.
    case answer(revision: Int64)
    /// Changes from `since` to `revision` (a change message on the WebSocket).
    case changes(since: Int64, revision: Int64)
    /// Something to send back at once (a pong).
    case reply(Reply)
    /// Nothing yet (a part of a message), or nothing for the writer.
    case nothing
}

/// How pushes and answers travel on one kind of connection: what ``PushHandler`` leaves to it.
private protocol PushWire {
    associatedtype Inbound
    associatedtype Outbound
    /// The connection's name in errors.
    var name: String { get }
    /// The parts that send push `pushID`, whose body is `push`.
    func parts(of push: String, pushID: Int64) -> [Outbound]
    /// What an incoming part says, `pendingPushID` being the push that waits for its answer.
    /// - Throws: When it says the push failed.
    mutating func read(_ part: Inbound, pendingPushID: Int64) throws -> Heard<Outbound>
}

/// Sends a writer's pushes on its connection one after the other, each once the one before was
/// answered, and fails the writer when a push fails, has no answer within
/// ``PushSequence/answerTimeout``, or the connection closes.
private final class PushHandler<Wire: PushWire>: ChannelInboundHandler, PushLoop {
    typealias InboundIn = Wire.Inbound
    typealias OutboundOut = Wire.Outbound

    private var wire: Wire
    private var sequence: PushSequence
    private var context: ChannelHandlerContext?

    init(wire: Wire, pushes: PushWriter.Pushes) {
        self.wire = wire
        sequence = PushSequence(pushes: pushes)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func start(count: Int, done: EventLoopPromise<Void>) {
        if let push = sequence.start(count: count, done: done) { send(push) }
    }

    private func send(_ push: String) {
        guard let context else { return }
        for part in wire.parts(of: push, pushID: sequence.pendingPushID) {
            context.write(wrapOutboundOut(part), promise: nil)
        }
        context.flush()
        sequence.sent(on: context.eventLoop.assumeIsolated()) { [self] in
            fail(BenchmarkError("Push \(sequence.pendingPushID) had no answer on its \(wire.name) within 60 s."))
        }
    }

    /// An answer brings the writer to its revision; a change message that follows the writer's
    /// revision brings it to its own. Messages come in the order the server sent them.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        do {
            switch try wire.read(unwrapInboundIn(data), pendingPushID: sequence.pendingPushID) {
            case .answer(let revision):
                if let push = sequence.answered(revision: revision) { send(push) }
            case .changes(let since, let revision):
                if sequence.revision == since { sequence.revision = revision }
            case .reply(let part):
                context.writeAndFlush(wrapOutboundOut(part), promise: nil)
            case .nothing:
                break
            }
        } catch {
            fail(error)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        sequence.close(because: BenchmarkError("A writer's \(wire.name) was closed while it was pushing."))
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

extension ByteBuffer {
    /// How much of an answer or a message a writer keeps: its head, which says what it is. More
    /// than the longest read of it: an answer's first 96 bytes after its request id (at most 42),
    /// a change message's first 64, and the first 300 of a failure.
    fileprivate static let keptHead = 512

    /// Appends the start of `part` while this buffer holds less than ``keptHead``: a writer reads
    /// heads only, and copying the rest of every answer (about a thousand records for a 100-change
    /// push with ten writers) was a fifth of its processor time (docs/BENCHMARKS.md).
    fileprivate mutating func writeKeptHead(of part: ByteBuffer) {
        let room = Self.keptHead - readableBytes
        if room > 0 { writeBytes(part.readableBytesView.prefix(room)) }
    }
}

/// Pushes as `POST …/sync` requests on one kept-alive HTTP/1.1 connection.
private struct HTTPPushWire: PushWire {
    private let head: HTTPRequestHead
    private var status: HTTPResponseStatus = .ok
    /// The head of the answer being received.
    private var answer = ByteBuffer()

    var name: String { "HTTP connection" }

    init(host: String, pushes: PushWriter.Pushes) {
        let layer = pushes.layer.map { "/l/\($0)" } ?? ""
        head = HTTPRequestHead(
            version: .http1_1, method: .POST, uri: "/i/d/\(pushes.documentID)\(layer)/sync",
            headers: [
                "Host": host, "Authorization": "Token token=\"\(pushes.token)\"", "Content-Type": "application/json",
            ])
    }

    func parts(of push: String, pushID: Int64) -> [HTTPClientRequestPart] {
        let body = ByteBuffer(string: push)
        var head = self.head
        head.headers.add(name: "Content-Length", value: "\(body.readableBytes)")
        return [.head(head), .body(.byteBuffer(body)), .end(nil)]
    }

    mutating func read(_ part: HTTPClientResponsePart, pendingPushID: Int64) throws -> Heard<HTTPClientRequestPart> {
        switch part {
        case .head(let head):
            status = head.status
            answer.clear()
        case .body(let part):
            answer.writeKeptHead(of: part)
        case .end:
            guard status == .ok else {
                throw BenchmarkError("Push \(pendingPushID) got \(status.code): \(String(buffer: answer).prefix(300))")
            }
            return .answer(revision: try SyncAnswerHead.revision(of: answer.readableBytesView))
        }
        return .nothing
    }
}

/// Pushes as sync requests on a listening WebSocket, `{"requestId":N,"sync":{…}}`, answered on it
/// by `{"requestId":N,"answer":{…}}`, between change messages.
private struct WebSocketPushWire: PushWire {
    /// The head of the text message being received, over one or more frames.
    private var message = ByteBuffer()
    private var receivingText = false

    var name: String { "WebSocket" }

    /// Sets up `channel` to open the listening WebSocket of `pushes`' document (an HTTP upgrade)
    /// and to push on it once open; `ready` gets the handler then.
    static func addUpgrade(
        to channel: any Channel, host: String, pushes: PushWriter.Pushes,
        ready: EventLoopPromise<NIOLoopBound<any PushLoop>>
    ) throws {
        let upgrader = NIOWebSocketClientUpgrader(maxFrameSize: 1 << 24) { channel, _ in
            channel.eventLoop.makeCompletedFuture {
                let handler = PushHandler(wire: WebSocketPushWire(), pushes: pushes)
                try channel.pipeline.syncOperations.addHandler(handler)
                ready.succeed(NIOLoopBound(handler, eventLoop: channel.eventLoop))
            }
        }
        let layer = pushes.layer.map { "/l/\($0)" } ?? ""
        let request = UpgradeRequest(
            host: host,
            path: "/i/d/\(pushes.documentID)\(layer)/listen?since=0&changes=records&jwt=\(pushes.token)",
            ready: ready)
        // What arrives with the `101` (the server may send change messages right after it) goes on
        // to the WebSocket decoder: NIO's default drops it, which would start the decoder in the
        // middle of a frame.
        try channel.pipeline.syncOperations.addHTTPClientHandlers(
            leftOverBytesStrategy: .forwardBytes,
            withClientUpgrade: (
                upgraders: [upgrader],
                completionHandler: { context in
                    context.pipeline.removeHandler(name: UpgradeRequest.name, promise: nil)
                }
            ))
        try channel.pipeline.syncOperations.addHandler(request, name: UpgradeRequest.name)
    }

    func parts(of push: String, pushID: Int64) -> [WebSocketFrame] {
        let text = ByteBuffer(string: #"{"requestId":\#(pushID),"sync":\#(push)}"#)
        return [WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: text)]
    }

    mutating func read(_ frame: WebSocketFrame, pendingPushID: Int64) throws -> Heard<WebSocketFrame> {
        switch frame.opcode {
        case .text:
            message.clear()
            receivingText = true
            fallthrough
        case .continuation:
            guard receivingText else { return .nothing }
            message.writeKeptHead(of: frame.data)
            guard frame.fin else { return .nothing }
            receivingText = false
            return try Self.heard(message.readableBytesView, pendingPushID: pendingPushID)
        case .ping:
            return .reply(WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.data))
        case .connectionClose:
            var data = frame.unmaskedData
            let code = data.readInteger(as: UInt16.self).map(String.init) ?? "none"
            let reason = data.readString(length: data.readableBytes) ?? ""
            throw BenchmarkError("The server closed a writer's WebSocket (code \(code)): \(reason)")
        default:
            return .nothing
        }
    }

    /// What a text message says, from its head: an answer, a change message, or something else.
    private static func heard(_ text: ByteBufferView, pendingPushID: Int64) throws -> Heard<WebSocketFrame> {
        if text.starts(with: #"{"requestId":"#.utf8) {
            let prefix = #"{"requestId":\#(pendingPushID),"answer":"#.utf8
            guard text.starts(with: prefix) else {
                throw BenchmarkError(
                    "A push on a WebSocket failed: \(String(decoding: text.prefix(300), as: UTF8.self))")
            }
            return .answer(revision: try SyncAnswerHead.revision(of: text.dropFirst(prefix.count)))
        }
        return changeMessageRevisions(text).map { .changes(since: $0.since, revision: $0.revision) } ?? .nothing
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
