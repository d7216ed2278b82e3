import ArgumentParser
import Foundation
import InstantServer

/// Where `instant serve` keeps its records, and how it connects to PostgreSQL.
struct DatabaseOptions: ParsableArguments {
    @Option(
        name: [.customLong("database"), .customLong("database-url")],
        help: """
            Where records live: postgres://user:password@host:5432/database (several nodes may share it; \
            PDFs are stored in it too), or sqlite:///path/to/instant.sqlite (default <data-dir>/instant.sqlite). \
            Env: DATABASE_URL.
            """)
    var database: String?

    @Option(
        help: """
            The most PostgreSQL connections this node opens for requests (default 10; one more listens for the \
            other nodes). Keep the sum over all nodes under PostgreSQL's max_connections. Env: DATABASE_POOL_SIZE.
            """)
    var databasePoolSize: Int?

    @Option(
        help: """
            Seconds a new PostgreSQL connection may take to open before the request that needed it fails \
            (default 10). Env: DATABASE_CONNECT_TIMEOUT.
            """)
    var databaseConnectTimeout: Double?

    /// The location from the options, else the environment, else SQLite in the data directory.
    func location(dataDirectory: URL, environment: [String: String]) throws -> StorageLocation {
        var location = try StorageLocation.resolve(
            databaseURL: database ?? environment["DATABASE_URL"], dataDirectory: dataDirectory)
        let poolSize = try LimitOption.count(
            databasePoolSize, "--database-pool-size", "DATABASE_POOL_SIZE", environment, minimum: 1)
        let connectTimeout = try LimitOption.seconds(
            databaseConnectTimeout, "--database-connect-timeout", "DATABASE_CONNECT_TIMEOUT", environment,
            in: 0.1...600)
        if case .postgres(var configuration) = location {
            if let poolSize { configuration.maximumConnections = poolSize }
            if let connectTimeout { configuration.connectTimeout = connectTimeout }
            location = .postgres(configuration)
        } else if poolSize != nil || connectTimeout != nil {
            throw ValidationError(
                "--database-pool-size and --database-connect-timeout apply to PostgreSQL; the database here is \(location.description)."
            )
        }
        return location
    }
}
