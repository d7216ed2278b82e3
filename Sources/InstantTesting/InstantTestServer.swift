import Foundation
import Hummingbird
import InstantServer
import Logging
import ServiceLifecycle

/// A live Instant server on 127.0.0.1 with an ephemeral port, for tests of real HTTP clients.
///
/// ```swift
/// let server = try await InstantTestServer.start(storage: storage, importer: importer)
/// defer { Task { await server.stop() } }
/// // talk to server.baseURL
/// ```
public final class InstantTestServer: Sendable {
    /// The port the server listens on.
    public let port: Int
    /// The API token of the server.
    public let apiAuthToken: String
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    private init(port: Int, apiAuthToken: String, group: ServiceGroup, task: Task<Void, any Error>) {
        self.port = port
        self.apiAuthToken = apiAuthToken
        self.group = group
        self.task = task
    }

    /// Starts a server and returns once it listens.
    /// - Parameters:
    ///   - storage: The storage the server uses.
    ///   - importer: Reads uploaded PDFs.
    ///   - jwt: How client tokens are verified, if client routes are used.
    ///   - apiAuthToken: The API token; a random one by default.
    ///   - maxBodySize: The request body limit of the backend API.
    ///   - clientLimits: The limits of client routes.
    ///   - longPollTimeout: How long a long-poll waits before answering with no change.
    ///   - httpLimits: The connections' timeouts and limits.
    public static func start(
        storage: InstantStorage,
        importer: any DocumentImporter,
        jwt: JWTConfiguration? = nil,
        apiAuthToken: String = UUID().uuidString,
        maxBodySize: Int = 64 * 1024 * 1024,
        clientLimits: ClientLimits = ClientLimits(),
        longPollTimeout: Duration = .seconds(50),
        httpLimits: HTTPLimits = HTTPLimits(),
        documentDownload: DocumentDownloadConfiguration = DocumentDownloadConfiguration()
    ) async throws -> InstantTestServer {
        var configuration = InstantServerConfiguration(
            hostname: "127.0.0.1",
            port: 0,
            apiAuthToken: apiAuthToken,
            jwt: jwt,
            maxBodySize: maxBodySize,
            clientLimits: clientLimits,
            longPollTimeout: longPollTimeout
        )
        configuration.httpLimits = httpLimits
        configuration.documentDownload = documentDownload
        var logger = Logger(label: "instant.test-server")
        logger.logLevel = .warning
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = try await buildInstantApplication(
            configuration: configuration,
            storage: storage,
            importer: importer,
            logger: logger,
            onServerRunning: { port in
                continuation.yield(port)
                continuation.finish()
            }
        )
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let task = Task {
            // If the server fails to start, the wait for its port below ends too.
            defer { continuation.finish() }
            try await group.run()
        }
        var port: Int?
        for await value in ports {
            port = value
            break
        }
        guard let port, port > 0 else {
            task.cancel()
            throw CancellationError()
        }
        return InstantTestServer(port: port, apiAuthToken: apiAuthToken, group: group, task: task)
    }

    /// Shuts the server down gracefully and waits until it has stopped.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }
}
