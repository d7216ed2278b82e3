import Foundation
import PostgresNIO

extension PostgresBackend {
    /// Where a ``PostgresBackend`` connects, as whom, and how many connections it may open.
    ///
    /// Make one from a URL with ``init(url:)``:
    ///
    /// ```text
    /// postgres://user:password@host:5432/database
    /// postgres://user@/database?host=/var/run/postgresql        (a Unix socket in that directory)
    /// postgres://user:password@db.example.com/database?sslmode=verify-full
    /// ```
    public struct Configuration: Sendable {
        /// Where the server listens.
        public enum Endpoint: Sendable, Hashable {
            /// A TCP host and port.
            case tcp(host: String, port: Int)
            /// A Unix-domain socket: the directory it is in and the port, which names the socket
            /// file (`<directory>/.s.PGSQL.<port>`), as `libpq` does.
            case unixSocket(directory: String, port: Int)
        }

        /// Whether connections use TLS, with the meanings of `libpq`'s `sslmode`.
        public enum TLSMode: String, Sendable, Hashable, CaseIterable {
            /// Never use TLS.
            case disable
            /// Use TLS when the server offers it, without verifying its certificate.
            case prefer
            /// Always use TLS, without verifying the server's certificate.
            case require
            /// Always use TLS, and verify the server's certificate and host name against the
            /// system's trusted certificates.
            case verifyFull = "verify-full"
        }

        /// Where the server listens.
        public var endpoint: Endpoint
        /// The user to log in as.
        public var username: String
        /// The user's password, if the server asks for one. Never logged or shown.
        public var password: String?
        /// The database to use.
        public var database: String
        /// Whether connections use TLS (ignored for Unix sockets, which never do).
        public var tls: TLSMode
        /// The most connections the backend keeps open at once for queries (the events listener
        /// of ``PostgresBackend/events()`` opens one more). Every server node opens its own, so
        /// keep the nodes' sum under PostgreSQL's `max_connections`.
        public var maximumConnections = 10
        /// How long opening a connection may take before it fails.
        public var connectTimeout: Duration = .seconds(10)
        /// How long ``PostgresBackend/checkHealth()``, and the events listener's check of its
        /// connection, wait for an answer.
        public var healthCheckTimeout: Duration = .seconds(5)
        /// The longest a transaction may take. Past it the server stops waiting (the request fails
        /// and the client retries; pushes apply exactly once) and PostgreSQL ends a session left
        /// idle inside a transaction (`idle_in_transaction_session_timeout`), so that no lost
        /// connection keeps a layer locked.
        public var transactionTimeout: Duration = .seconds(30)
        /// How often the events listener of ``PostgresBackend/events()`` checks that its
        /// connection still answers (a network that dies silently closes no connection).
        public var listenerCheckInterval: Duration = .seconds(30)

        /// The default PostgreSQL port.
        public static let defaultPort = 5432

        /// Creates a configuration.
        public init(endpoint: Endpoint, username: String, password: String?, database: String, tls: TLSMode) {
            self.endpoint = endpoint
            self.username = username
            self.password = password
            self.database = database
            self.tls = tls
        }

        /// Reads a `postgres://` (or `postgresql://`) URL: `postgres://user:password@host:port/database`,
        /// with the query parameters `host=/socket/directory` (connect through the Unix socket in
        /// that directory), `port` (of the socket too: its file is `.s.PGSQL.<port>`) and
        /// `sslmode=disable|prefer|require|verify-full` (default `prefer` over TCP). User and password are percent-decoded; the database defaults to the user name.
        ///
        /// - Throws: ``StorageError/Code/backendFailure`` naming what is wrong (never the password).
        public init(url text: String) throws {
            func invalid(_ problem: String) -> StorageError {
                StorageError(
                    .backendFailure,
                    "The PostgreSQL URL is not valid: \(problem). Write it as "
                        + "postgres://user:password@host:5432/database (or postgres://user@/database?host=/socket/directory)."
                )
            }
            guard let components = URLComponents(string: text) else { throw invalid("it cannot be parsed as a URL") }
            guard let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" else {
                throw invalid("the scheme must be postgres:// or postgresql://")
            }
            guard let username = components.user, !username.isEmpty else {
                throw invalid("it names no user (postgres://user@…)")
            }
            var socketDirectory: String?
            var tls: TLSMode?
            var queryPort: Int?
            for item in components.queryItems ?? [] {
                switch item.name {
                case "host":
                    guard let value = item.value, value.hasPrefix("/") else {
                        throw invalid("the host parameter must be the absolute path of a socket directory")
                    }
                    socketDirectory = value
                case "port":
                    guard let value = item.value.flatMap(Int.init), (1...65535).contains(value) else {
                        throw invalid("the port parameter must be a number from 1 to 65535")
                    }
                    queryPort = value
                case "sslmode":
                    guard let mode = item.value.flatMap(TLSMode.init(rawValue:)) else {
                        let modes = TLSMode.allCases.map(\.rawValue).joined(separator: ", ")
                        throw invalid("sslmode must be one of \(modes)")
                    }
                    tls = mode
                default:
                    throw invalid("the parameter '\(item.name)' is not supported (only host, port and sslmode are)")
                }
            }
            let port = queryPort ?? components.port ?? Self.defaultPort
            var host = components.host ?? ""
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            let endpoint: Endpoint
            if let socketDirectory {
                endpoint = .unixSocket(directory: socketDirectory, port: port)
            } else if !host.isEmpty {
                endpoint = .tcp(host: host, port: port)
            } else {
                throw invalid("it names no host (postgres://user@host/…, or ?host=/socket/directory for a Unix socket)")
            }
            var database = components.path
            if database.hasPrefix("/") { database.removeFirst() }
            if database.contains("/") { throw invalid("the database name contains '/'") }
            self.init(
                endpoint: endpoint,
                username: username,
                password: components.password,
                database: database.isEmpty ? username : database,
                tls: tls ?? .prefer
            )
        }

        /// The URL without the password, for logs.
        public var redactedURL: String {
            var components = URLComponents()
            components.scheme = "postgres"
            components.user = username
            components.path = "/" + database
            switch endpoint {
            case .tcp(let host, let port):
                components.host = host.contains(":") ? "[\(host)]" : host
                components.port = port
                if tls != .prefer { components.queryItems = [URLQueryItem(name: "sslmode", value: tls.rawValue)] }
            case .unixSocket(let directory, let port):
                components.host = ""
                components.queryItems = [URLQueryItem(name: "host", value: directory)]
                if port != Self.defaultPort {
                    components.queryItems?.append(URLQueryItem(name: "port", value: "\(port)"))
                }
            }
            return components.string ?? "postgres://\(username)@…/\(database)"
        }

        /// The TLS configuration of ``tls``, or `nil` for ``TLSMode/disable``.
        var tlsConfiguration: TLSConfiguration? {
            var configuration = TLSConfiguration.makeClientConfiguration()
            switch tls {
            case .disable: return nil
            case .prefer, .require: configuration.certificateVerification = .none
            case .verifyFull: configuration.certificateVerification = .fullVerification
            }
            return configuration
        }

        /// The configuration of the pool of query connections.
        var clientConfiguration: PostgresClient.Configuration {
            var configuration: PostgresClient.Configuration
            switch endpoint {
            case .tcp(let host, let port):
                let mode: PostgresClient.Configuration.TLS =
                    switch (tls, tlsConfiguration) {
                    case (.prefer, let tlsConfiguration?): .prefer(tlsConfiguration)
                    case (_, let tlsConfiguration?): .require(tlsConfiguration)
                    case (_, nil): .disable
                    }
                configuration = PostgresClient.Configuration(
                    host: host, port: port, username: username, password: password, database: database, tls: mode)
            case .unixSocket(let directory, let port):
                configuration = PostgresClient.Configuration(
                    unixSocketPath: Self.socketPath(directory: directory, port: port),
                    username: username,
                    password: password,
                    database: database
                )
            }
            configuration.options.maximumConnections = maximumConnections
            configuration.options.connectTimeout = connectTimeout
            let idleLimit = transactionTimeout.components.seconds * 1000 + 1000
            // Generic plans: the server's statements look up keys and ranges of an index, which
            // their generic plans use whatever the statistics (tests check the group's read), while
            // PostgreSQL's default plans a statement of array arguments again at every execution
            // (the arrays' lengths make its custom plans look cheaper): 150 µs of planning a group,
            // and a custom plan worse than the generic one once the statistics are stale.
            configuration.options.additionalStartupParameters = [
                ("idle_in_transaction_session_timeout", "\(idleLimit)"),
                ("plan_cache_mode", "force_generic_plan"),
            ]
            return configuration
        }

        /// The configuration of a single connection (the events listener's).
        func connectionConfiguration() throws -> PostgresConnection.Configuration {
            var configuration: PostgresConnection.Configuration
            switch endpoint {
            case .tcp(let host, let port):
                let mode: PostgresConnection.Configuration.TLS
                if let tlsConfiguration {
                    let context = try NIOSSLContext(configuration: tlsConfiguration)
                    mode = tls == .prefer ? .prefer(context) : .require(context)
                } else {
                    mode = .disable
                }
                configuration = PostgresConnection.Configuration(
                    host: host, port: port, username: username, password: password, database: database, tls: mode)
            case .unixSocket(let directory, let port):
                configuration = PostgresConnection.Configuration(
                    unixSocketPath: Self.socketPath(directory: directory, port: port),
                    username: username,
                    password: password,
                    database: database
                )
            }
            configuration.options.connectTimeout = TimeAmount(connectTimeout)
            return configuration
        }

        /// The path of the socket file in a socket directory, as PostgreSQL names it.
        static func socketPath(directory: String, port: Int) -> String {
            URL(fileURLWithPath: directory).appendingPathComponent(".s.PGSQL.\(port)").path
        }
    }
}
