import ArgumentParser
import Foundation
import Hummingbird
import InstantServer
import Logging

/// `instant serve`: runs the server until SIGTERM or SIGINT, then shuts down gracefully.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Instant server.",
        discussion: """
            Works with no configuration: listens on 127.0.0.1:5000 and keeps its data in ./instant-data. \
            On first start without JWT_PUBLIC_KEY it writes a development ES256 key pair and an API token \
            into the data directory and prints them with a curl example; `instant token` signs client \
            tokens with that key.

            Every option can also be set by the environment variable named in its help; a flag wins over \
            the environment. SIGTERM or SIGINT stops the server gracefully.
            """
    )

    @Option(help: "The address to listen on (default 127.0.0.1). Env: HOST.")
    var hostname: String?

    @Option(help: "The TCP port to listen on (default 5000; 0 picks a free one). Env: PORT.")
    var port: Int?

    @Option(
        help:
            "The data directory: SQLite database, PDFs, development credentials (default ./instant-data). Env: INSTANT_DATA_DIR."
    )
    var dataDir: String?

    @OptionGroup(title: "Database") var database: DatabaseOptions

    @Option(
        help:
            "The token of the /api routes (Authorization: Token token=\"...\"); a generated development token when unset. Env: API_AUTH_TOKEN."
    )
    var apiAuthToken: String?

    @Option(help: "The public key of client JWTs: PEM text or the path of a PEM file. Env: JWT_PUBLIC_KEY.")
    var jwtPublicKey: String?

    @Option(help: "The algorithm of client JWTs: RS256 (default), RS512, ES256 or ES512. Env: JWT_ALGORITHM.")
    var jwtAlgorithm: String?

    @Option(
        help: "The largest request body of the backend API (/api/...), in bytes (default 256 MiB). Env: MAX_BODY_SIZE.")
    var maxBodySize: Int?

    @Option(help: "trace, debug, info, notice, warning, error or critical (default info). Env: LOG_LEVEL.")
    var logLevel: String?

    @Option(
        help: """
            The longest a document added by URL may take to download, in seconds (default 30; 0 turns \
            adding by URL off). Env: DOWNLOAD_TIMEOUT.
            """)
    var downloadTimeout: Double?

    @Option(
        help: """
            The hosts documents may be added from by URL, separated by commas (default: any host). \
            Env: DOWNLOAD_HOSTS.
            """)
    var downloadHosts: String?

    @OptionGroup(title: "Client limits")
    var clientLimits: ClientLimitOptions
    @OptionGroup(title: "Connection limits") var httpLimitOptions: HTTPLimitOptions
    @OptionGroup(title: "PDF processing") var pdfProcessing: PDFProcessingOptions
    @OptionGroup(title: "Web viewer") var viewerOptions: ViewerOptions

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        var logger = Logger(label: "instant")
        let levelText = logLevel ?? environment["LOG_LEVEL"] ?? "info"
        guard let level = Logger.Level(rawValue: levelText.lowercased()) else {
            throw ValidationError("LOG_LEVEL '\(levelText)' is not a log level.")
        }
        logger.logLevel = level

        let hostname = hostname ?? environment["HOST"] ?? "127.0.0.1"
        let port =
            try port ?? environment["PORT"].map { text in
                guard let value = Int(text), (0...65535).contains(value) else {
                    throw ValidationError("PORT '\(text)' is not a port number.")
                }
                return value
            } ?? 5000
        let dataDirectory = URL(fileURLWithPath: dataDir ?? environment["INSTANT_DATA_DIR"] ?? "instant-data")
        let maxBodySize =
            try maxBodySize ?? environment["MAX_BODY_SIZE"].map { text in
                guard let value = Int(text), value > 0 else {
                    throw ValidationError("MAX_BODY_SIZE '\(text)' is not a size.")
                }
                return value
            } ?? 256 * 1024 * 1024

        var apiToken = apiAuthToken ?? environment["API_AUTH_TOKEN"]
        var jwt: JWTConfiguration?
        var development: DevelopmentCredentials?
        var usesDevelopmentKey = false
        var usesDevelopmentToken = false
        if let key = jwtPublicKey ?? environment["JWT_PUBLIC_KEY"] {
            let algorithmText = jwtAlgorithm ?? environment["JWT_ALGORITHM"] ?? "RS256"
            let algorithm = JWTSigningAlgorithm(rawValue: algorithmText)
            guard JWTSigningAlgorithm.supported.contains(algorithm) else {
                throw ValidationError("JWT_ALGORITHM '\(algorithmText)' is not one of RS256, RS512, ES256, ES512.")
            }
            jwt = JWTConfiguration(publicKeyPEM: try Self.pem(key), algorithm: algorithm)
        }
        if jwt == nil || apiToken == nil {
            let credentials = try DevelopmentCredentials.loadOrCreate(in: dataDirectory)
            development = credentials
            if jwt == nil {
                jwt = JWTConfiguration(publicKeyPEM: credentials.keyPair.publicKeyPEM, algorithm: .es256)
                usesDevelopmentKey = true
            }
            if apiToken == nil {
                apiToken = credentials.apiAuthToken
                usesDevelopmentToken = true
            }
        }
        guard let apiToken, let jwt else { throw ValidationError("No API token or JWT key could be set up.") }

        let location = try database.location(dataDirectory: dataDirectory, environment: environment)
        let storage = try location.open(logger: logger)
        var configuration = InstantServerConfiguration(
            hostname: hostname,
            port: port,
            apiAuthToken: apiToken,
            jwt: jwt,
            maxBodySize: maxBodySize,
            clientLimits: try clientLimits.limits(environment: environment),
            pdfProcessing: try pdfProcessing.configuration(environment: environment)
        )
        configuration.httpLimits = try httpLimitOptions.limits(environment: environment)
        configuration.documentDownload = try documentDownload(environment: environment)
        // The start page mints tokens for anyone who reaches it: only with generated credentials.
        let startPage = usesDevelopmentKey && usesDevelopmentToken ? development : nil
        configuration.viewer = viewerOptions.configuration(
            environment: environment, development: startPage.map { DevelopmentViewer(keyPair: $0.keyPair) })
        let credentials = development
        let storageDescription = location.description
        let printKeyHint = usesDevelopmentKey
        let printToken = usesDevelopmentToken
        let app = try await buildInstantApplication(
            configuration: configuration,
            storage: storage,
            importer: makeDocumentImporter(),
            logger: logger,
            onServerRunning: { boundPort in
                Self.printWelcome(
                    hostname: hostname,
                    port: boundPort,
                    dataDirectory: dataDirectory,
                    storage: storageDescription,
                    development: credentials,
                    usesDevelopmentKey: printKeyHint,
                    apiToken: printToken ? apiToken : nil,
                    startPage: startPage != nil
                )
            }
        )
        try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
    }

    /// PEM text as given, or read from the path given.
    static func pem(_ value: String) throws -> String {
        if value.contains("-----BEGIN") { return value.replacingOccurrences(of: "\\n", with: "\n") }
        do {
            return try String(contentsOfFile: value, encoding: .utf8)
        } catch {
            throw ValidationError("JWT_PUBLIC_KEY is neither PEM text nor a readable PEM file: \(value)")
        }
    }

    static func printWelcome(
        hostname: String,
        port: Int,
        dataDirectory: URL,
        storage: String,
        development: DevelopmentCredentials?,
        usesDevelopmentKey: Bool,
        apiToken: String?,
        startPage: Bool
    ) {
        var lines = [
            "OpenInstant listening on http://\(hostname):\(port) (data in \(dataDirectory.path); records: \(storage))"
        ]
        if let development {
            if development.wereCreated {
                lines.append("Created development credentials in \(dataDirectory.path) (not for production).")
            }
        }
        if let apiToken { lines.append("API token: \(apiToken)") }
        if development != nil, usesDevelopmentKey {
            lines.append(
                "Client JWT public key: \(dataDirectory.appendingPathComponent(DevelopmentCredentials.publicKeyFile).path) (ES256)"
            )
            lines.append("Mint a client token: instant token --data-dir \(dataDirectory.path) --document <id>")
        }
        if startPage {
            lines.append("Open http://\(hostname):\(port)/ in a browser: upload and annotate PDFs (development only).")
            if !["127.0.0.1", "localhost", "::1"].contains(hostname) {
                lines.append(
                    "Warning: anyone who reaches \(hostname) can use that page as any user; set API_AUTH_TOKEN and JWT_PUBLIC_KEY."
                )
            }
        }
        lines.append("Try it:")
        lines.append(
            "  curl -X POST -H 'Authorization: Token token=\"\(apiToken ?? "$API_AUTH_TOKEN")\"' -H 'Content-Type: application/pdf' "
                + "--data-binary @file.pdf http://\(hostname):\(port)/api/documents"
        )
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }

    /// `--download-timeout` and `--download-hosts`, or their environment variables.
    private func documentDownload(environment: [String: String]) throws -> DocumentDownloadConfiguration {
        var download = DocumentDownloadConfiguration()
        let timeoutText = downloadTimeout.map { String($0) } ?? environment["DOWNLOAD_TIMEOUT"]
        if let timeoutText {
            guard let seconds = Double(timeoutText), seconds >= 0, seconds <= 3_600 else {
                throw ValidationError("DOWNLOAD_TIMEOUT '\(timeoutText)' is not a number of seconds from 0 to 3600.")
            }
            download.isEnabled = seconds > 0
            download.timeout = .milliseconds(Int64(seconds * 1000))
        }
        if let hosts = downloadHosts ?? environment["DOWNLOAD_HOSTS"] {
            download.allowedHosts = Set(
                hosts.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter {
                    !$0.isEmpty
                })
        }
        return download
    }
}
