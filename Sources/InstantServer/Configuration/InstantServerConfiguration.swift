/// Everything the server application needs to know besides its storage.
public struct InstantServerConfiguration: Sendable {
    /// The host name or address to listen on.
    public var hostname: String
    /// The TCP port; `0` picks a free one.
    public var port: Int
    /// The token that authorizes the user's backend on `/api/...`.
    public var apiAuthToken: String
    /// How client JWTs are verified; `nil` refuses every client route.
    public var jwt: JWTConfiguration?
    /// The largest request body accepted on the backend API (`/api/...`), in bytes; larger bodies
    /// get 413. Client routes have their own, smaller limits in ``clientLimits``.
    public var maxBodySize: Int
    /// What one client token can make the server hold or do.
    public var clientLimits: ClientLimits
    /// How long a long-poll on `.../listen` waits for a new revision before answering with the
    /// current one; below 60 s, which proxies commonly cut.
    public var longPollTimeout: Duration
    /// How often the server pings a listening WebSocket; a peer that does not answer is closed.
    public var webSocketPingInterval: Duration
    /// Timeouts, the request head size limit and the connection limit of the HTTP connections.
    public var httpLimits = HTTPLimits()
    /// The limits of reading and writing PDFs, and the worker threads that do it.
    public var pdfProcessing: PDFProcessingConfiguration
    /// The web viewer: where pdf.js is, and whether the development start page is on.
    public var viewer = ViewerConfiguration()
    /// Adding documents from a URL: on or off, time and size limits, allowed hosts.
    public var documentDownload = DocumentDownloadConfiguration()

    /// Creates a configuration.
    public init(
        hostname: String = "127.0.0.1",
        port: Int = 5000,
        apiAuthToken: String,
        jwt: JWTConfiguration? = nil,
        maxBodySize: Int = 256 * 1024 * 1024,
        clientLimits: ClientLimits = ClientLimits(),
        longPollTimeout: Duration = .seconds(50),
        webSocketPingInterval: Duration = .seconds(30),
        pdfProcessing: PDFProcessingConfiguration = .init()
    ) {
        self.hostname = hostname
        self.port = port
        self.apiAuthToken = apiAuthToken
        self.jwt = jwt
        self.maxBodySize = maxBodySize
        self.clientLimits = clientLimits
        self.longPollTimeout = longPollTimeout
        self.webSocketPingInterval = webSocketPingInterval
        self.pdfProcessing = pdfProcessing
    }
}

/// The public key and algorithm that client JWTs must be signed with.
public struct JWTConfiguration: Sendable {
    /// The PEM-encoded public key (RSA for RS256/RS512, EC P-256/P-521 for ES256/ES512).
    public var publicKeyPEM: String
    /// The one accepted signing algorithm.
    public var algorithm: JWTSigningAlgorithm

    /// Creates a JWT configuration.
    public init(publicKeyPEM: String, algorithm: JWTSigningAlgorithm) {
        self.publicKeyPEM = publicKeyPEM
        self.algorithm = algorithm
    }
}

/// A JWT signing algorithm the server accepts.
public struct JWTSigningAlgorithm: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The JOSE name (`alg` header value).
    public var rawValue: String
    /// Creates an algorithm from its JOSE name; only the static members are supported.
    public init(rawValue: String) { self.rawValue = rawValue.uppercased() }
    public var description: String { rawValue }

    /// RSASSA-PKCS1-v1_5 with SHA-256.
    public static let rs256 = JWTSigningAlgorithm(rawValue: "RS256")
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    public static let rs512 = JWTSigningAlgorithm(rawValue: "RS512")
    /// ECDSA on P-256 with SHA-256.
    public static let es256 = JWTSigningAlgorithm(rawValue: "ES256")
    /// ECDSA on P-521 with SHA-512.
    public static let es512 = JWTSigningAlgorithm(rawValue: "ES512")

    /// Every supported algorithm.
    public static let supported: [JWTSigningAlgorithm] = [.rs256, .rs512, .es256, .es512]
}
