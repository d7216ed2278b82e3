import Foundation
import HummingbirdWSClient
import InstantJSON
import Logging
import NIOWebSocket
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A WebSocket client on a layer's `.../listen`, collecting what the server sends.
final class ListeningSocket: Sendable {
    private actor Inbox {
        var messages: [JSONValue] = []
        func add(_ message: JSONValue) { messages.append(message) }
    }

    private enum Outgoing {
        case text(String)
        case close
    }

    private let inbox = Inbox()
    private let outgoing: AsyncStream<Outgoing>.Continuation
    private let task: Task<WebSocketCloseFrame?, any Error>

    /// Connects; the returned socket is open once the server sent its first message.
    init(port: Int, path: String) {
        let (sends, outgoing) = AsyncStream<Outgoing>.makeStream()
        self.outgoing = outgoing
        let inbox = self.inbox
        task = Task {
            try await WebSocketClient.connect(
                url: "ws://127.0.0.1:\(port)\(path)", logger: Logger(label: "test.listen")
            ) { inbound, outbound, _ in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for try await message in inbound.messages(maxSize: 1 << 24) {
                            if case .text(let text) = message, let value = try? JSONValue(parsing: text) {
                                await inbox.add(value)
                            }
                        }
                    }
                    group.addTask {
                        for await send in sends {
                            switch send {
                            case .text(let text): try await outbound.write(.text(text))
                            case .close:
                                try await outbound.close(.normalClosure, reason: "test done")
                                return
                            }
                        }
                    }
                    try await group.next()
                    group.cancelAll()
                }
            }
        }
    }

    /// Sends a text message.
    func send(_ text: String) {
        outgoing.yield(.text(text))
    }

    /// The first message (in arrival order) that satisfies `matches`, waiting up to 30 s.
    func message(where matches: (JSONValue) -> Bool) async throws -> JSONValue? {
        for _ in 0..<1500 {
            if let found = await inbox.messages.first(where: matches) { return found }
            try await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }

    /// The latest presence list received, as `user:connections` entries (`-` for anonymous users).
    func presence() async -> [String]? {
        await inbox.messages.last { $0["presence"] != nil }?["presence"]?.arrayValue?.map {
            "\($0["userId"]?.stringValue ?? "-"):\($0["connections"]?.intValue ?? 0)"
        }
    }

    /// Every message received so far.
    func messages() async -> [JSONValue] { await inbox.messages }

    /// Waits up to 30 s until the latest presence list is `expected`; returns the latest one.
    func presence(becoming expected: [String]) async throws -> [String]? {
        for _ in 0..<1500 {
            if await presence() == expected { return expected }
            try await Task.sleep(for: .milliseconds(20))
        }
        return await presence()
    }

    /// Closes from the client side; drops the connection when the server does not answer the
    /// close within 30 s.
    func close() async {
        outgoing.yield(.close)
        _ = try? await ended(within: .seconds(30))
    }

    /// Waits up to 2 minutes for the server to close the connection and returns its close frame.
    ///
    /// It returns as soon as the close comes; the limit is only how long a failing test waits. The
    /// whole suite runs its tests at once on two cores, where a test's tasks can wait tens of
    /// seconds for a thread: a test that passes alone in half a second took 27 to 82 s there, and
    /// once gave up on a close after 30 s.
    /// - Throws: ``StillOpen`` when the server has not closed it by then (the connection is dropped).
    func closedByServer() async throws -> WebSocketCloseFrame? {
        try await ended(within: .seconds(120))
    }

    /// The connection did not end in the time given.
    struct StillOpen: Error, CustomStringConvertible {
        var description: String { "the WebSocket connection was still open after the time given" }
    }

    /// The connection's close frame once it ended; after `limit`, cancels it and throws ``StillOpen``.
    private func ended(within limit: Duration) async throws -> WebSocketCloseFrame? {
        let task = self.task
        let timer = Task { () -> Bool in
            guard (try? await Task.sleep(for: limit)) != nil else { return false }
            task.cancel()
            return true
        }
        let result = await task.result
        timer.cancel()
        // A close frame that came is the answer even when the timer also went off meanwhile (on a
        // busy machine both can be late to run).
        if case .success(let frame?) = result { return frame }
        if await timer.value { throw StillOpen() }
        return try result.get()
    }
}

/// A GET with a JWT through URLSession (a separate connection, so it can wait while other
/// requests go on).
func longPoll(port: Int, path: String, token: String) async throws -> (status: Int, body: JSONValue?) {
    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
    request.setValue("Token token=\"\(token)\"", forHTTPHeaderField: "Authorization")
    request.timeoutInterval = 120
    let (data, response) = try await URLSession.shared.data(for: request)
    return ((response as? HTTPURLResponse)?.statusCode ?? 0, try? JSONValue(parsing: data))
}

/// A WebSocket upgrade request of `path` on a new connection, and the server's answer.
func rawUpgrade(port: Int, path: String) async throws -> RawConnection.Answer? {
    try await RawConnection.request(
        port: port, "GET", path,
        headers: [
            "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        ])
}
