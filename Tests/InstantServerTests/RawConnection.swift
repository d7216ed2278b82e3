import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A TCP connection to a test server that sends exactly the bytes it is given and records what
/// comes back and whether the server closed it: a client that can be slow, silent or malformed
/// on purpose.
final class RawConnection: Sendable {
    /// An HTTP answer read from the connection.
    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: Data
        var reason: String? {
            (try? JSONSerialization.jsonObject(with: body) as? [String: Any])
                .flatMap { ($0["error"] as? [String: Any])?["reason"] as? String }
        }
    }

    private struct Received {
        var bytes: [UInt8] = []
        var consumed = 0
        var isClosed = false
    }

    /// Records what arrives.
    private final class Recorder: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let received: NIOLockedValueBox<Received>

        init(_ received: NIOLockedValueBox<Received>) { self.received = received }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = Self.unwrapInboundIn(data)
            received.withLockedValue { $0.bytes += buffer.readableBytesView }
        }

        func channelInactive(context: ChannelHandlerContext) {
            received.withLockedValue { $0.isClosed = true }
            context.fireChannelInactive()
        }
    }

    private let channel: any Channel
    private let received: NIOLockedValueBox<Received>

    private init(channel: any Channel, received: NIOLockedValueBox<Received>) {
        self.channel = channel
        self.received = received
    }

    /// Connects to the server on 127.0.0.1.
    /// - Parameters:
    ///   - reading: Whether the connection reads what arrives; one that does not leaves it to the
    ///     socket buffers until ``read()`` or ``startReading()``.
    ///   - first: Bytes written as soon as the connection is made, by the connection's event loop.
    ///     In a full test run a test's task can wait seconds for its turn between connecting and
    ///     sending, longer than the tight header timeout a test may give the server; these bytes
    ///     do not wait for it.
    static func open(port: Int, reading: Bool = true, sending first: [UInt8] = []) async throws -> RawConnection {
        let received = NIOLockedValueBox(Received())
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(ChannelOptions.autoRead, value: reading)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Recorder(received))
                }
            }
            .connect(host: "127.0.0.1", port: port)
            .flatMap { channel in
                guard !first.isEmpty else { return channel.eventLoop.makeSucceededFuture(channel) }
                return channel.writeAndFlush(ByteBuffer(bytes: first)).map { channel }
            }
            .get()
        return RawConnection(channel: channel, received: received)
    }

    /// Connects and sends `text` at once (``open(port:reading:sending:)``).
    static func open(port: Int, sending text: String) async throws -> RawConnection {
        try await open(port: port, sending: Array(text.utf8))
    }

    /// Sends bytes; fails once the server has closed the connection.
    func send(_ bytes: some Sequence<UInt8>) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: Array(bytes))).get()
    }

    /// Sends text.
    func send(_ text: String) async throws {
        try await send(Array(text.utf8))
    }

    /// Sends a request with a `Content-Length` body.
    func sendRequest(_ method: String, _ path: String, headers: [String: String] = [:], body: Data = Data())
        async throws
    {
        try await send(Self.request(method, path, headers: headers, body: body))
    }

    /// The bytes of a request with a `Content-Length` body.
    static func request(_ method: String, _ path: String, headers: [String: String] = [:], body: Data = Data())
        -> [UInt8]
    {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" || method == "PUT" { head += "Content-Length: \(body.count)\r\n" }
        return Array((head + "\r\n").utf8) + body
    }

    /// Reads once what has arrived, on a connection that does not read by itself.
    func read() {
        channel.read()
    }

    /// Makes a connection that did not read by itself read everything from now on.
    func startReading() async throws {
        try await channel.setOption(ChannelOptions.autoRead, value: true).get()
    }

    /// The number of bytes received so far.
    var receivedCount: Int { received.withLockedValue { $0.bytes.count } }

    /// Whether the server has closed the connection.
    var isClosed: Bool { received.withLockedValue { $0.isClosed } }

    /// Whether bytes arrived that no ``answer(within:)`` has read.
    var hasUnreadBytes: Bool { received.withLockedValue { $0.bytes.count > $0.consumed } }

    /// Waits until the server closes the connection; `false` if it is still open after `seconds`.
    func closedByServer(within seconds: Double = 30) async throws -> Bool {
        try await Self.poll(seconds) { isClosed }
    }

    /// The next complete answer (head and `Content-Length` body), waiting up to `seconds`; `nil`
    /// if none came.
    func answer(within seconds: Double = 30) async throws -> Answer? {
        var answer: Answer?
        _ = try await Self.poll(seconds) {
            answer = received.withLockedValue { received in
                guard let (parsed, length) = Self.parse(received.bytes[received.consumed...]) else { return nil }
                received.consumed += length
                return parsed
            }
            return answer != nil || isClosed && !hasUnreadBytes
        }
        return answer
    }

    /// Closes the connection from the client's side.
    func close() async {
        try? await channel.close()
    }

    /// One request on a new connection, and its answer.
    static func request(
        port: Int, _ method: String, _ path: String, headers: [String: String] = [:], body: Data = Data()
    ) async throws -> Answer? {
        let connection = try await open(port: port, sending: request(method, path, headers: headers, body: body))
        let answer = try await connection.answer()
        await connection.close()
        return answer
    }

    /// Polls `condition` every 10 ms until it holds (`true`) or `seconds` pass (`false`).
    static func poll(_ seconds: Double, _ condition: () throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            if try condition() { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return try condition()
    }

    /// An answer at the start of `bytes` and its length in bytes, if it arrived completely.
    private static func parse(_ bytes: ArraySlice<UInt8>) -> (Answer, Int)? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else { return nil }
        let lines = String(decoding: bytes[bytes.startIndex..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = lines[0].split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let bodyStart = end + separator.count
        let length = Int(headers["content-length"] ?? "0") ?? 0
        guard bytes.endIndex - bodyStart >= length else { return nil }
        let body = Data(bytes[bodyStart..<bodyStart + length])
        return (Answer(status: status, headers: headers, body: body), bodyStart + length - bytes.startIndex)
    }
}
