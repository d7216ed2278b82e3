import Foundation
import InstantJSON
import Logging
import WSClient

extension URLSessionTransport {
    /// The largest message accepted on the listening WebSocket: change messages are at most
    /// 256 KiB by default, but a sync answer on the socket can carry many records.
    static let maxListenMessageSize = 64 << 20

    func listen(
        documentID: String, layer: String, jwt: String, since: Int64,
        opened: @escaping @Sendable (ListeningSocket) -> Void,
        received: @escaping @Sendable (ListenMessage) -> Void
    ) async throws(InstantError) {
        guard
            var components = URLComponents(
                url: serverURL.appendingPathComponent("\(layerPath(documentID, layer))/listen"),
                resolvingAgainstBaseURL: false)
        else {
            throw InstantError(
                .invalidServerResponse, "The server URL \(serverURL) cannot be turned into a WebSocket URL.")
        }
        components.scheme = components.scheme == "https" ? "wss" : "ws"
        components.queryItems = [
            URLQueryItem(name: "since", value: "\(since)"), URLQueryItem(name: "changes", value: "records"),
        ]
        guard let url = components.string else {
            throw InstantError(
                .invalidServerResponse, "The server URL \(serverURL) cannot be turned into a WebSocket URL.")
        }
        var configuration = WebSocketClientConfiguration()
        configuration.additionalHeaders[.authorization] = "Token token=\"\(jwt)\""
        let socket = ListeningSocket()
        defer { socket.close() }
        let closeFrame: WebSocketCloseFrame?
        do {
            closeFrame = try await WebSocketClient.connect(
                url: url, configuration: configuration, logger: Self.webSocketLogger
            ) { inbound, outbound, _ in
                opened(socket)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await text in socket.outgoing { try await outbound.write(.text(text)) }
                    }
                    group.addTask {
                        for try await message in inbound.messages(maxSize: Self.maxListenMessageSize) {
                            guard case .text(let text) = message, let value = try? JSONValue(parsing: text) else {
                                continue
                            }
                            if value["requestId"] != nil {
                                socket.receivedAnswer(value)
                            } else if let announcement = try? ListenMessage(value) {
                                received(announcement)
                            }
                        }
                    }
                    // Either side ending ends the connection.
                    try await group.next()
                    group.cancelAll()
                }
            }
        } catch let error as WebSocketClientError where error == .webSocketUpgradeFailed {
            return
        } catch is CancellationError {
            throw InstantError(.cancelled, "Listening was stopped.")
        } catch {
            if Task.isCancelled { throw InstantError(.cancelled, "Listening was stopped.") }
            throw InstantError(
                .couldNotReachServer, "The listening connection to \(serverURL.absoluteString) failed: \(error)")
        }
        if Task.isCancelled { throw InstantError(.cancelled, "Listening was stopped.") }
        if let closeFrame, closeFrame.closeCode == .policyViolation {
            throw InstantError(
                .authenticationFailed, "The server closed the listening connection: \(closeFrame.reason ?? "")")
        }
        throw InstantError(
            .couldNotReachServer,
            "The server closed the listening connection (\(closeFrame.map { "\($0.closeCode)" } ?? "without a close frame"))."
        )
    }

    /// WSClient's logger: the SDK reports through its errors and events, not a log.
    private static let webSocketLogger = Logger(label: "instant.listening") { _ in SwiftLogNoOpLogHandler() }
}
