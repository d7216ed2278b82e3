// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "OpenInstant",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "Instant", targets: ["Instant"]),
        .library(name: "InstantJSON", targets: ["InstantJSON"]),
        .library(name: "InstantPDF", targets: ["InstantPDF"]),
        .library(name: "InstantServer", targets: ["InstantServer"]),
        .library(name: "InstantTesting", targets: ["InstantTesting"]),
        .executable(name: "instant", targets: ["instant"]),
        .executable(name: "instant-bench", targets: ["instant-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", from: "1.6.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
    ],
    targets: [
        // The client SDK: InstantClient, document descriptors, the offline store and the sync cycle.
        .target(
            name: "Instant",
            dependencies: [
                "InstantJSON",
                "InstantPDF",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "WSClient", package: "swift-websocket"),
            ]
        ),
        // The data format: document JSON, every record type, validation, ULIDs.
        .target(name: "InstantJSON", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
        // zlib from the system, for FlateDecode.
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        // SQLite's process-wide settings, which Swift cannot pass to `sqlite3_config`.
        .systemLibrary(name: "CSQLiteSettings", providers: [.apt(["libsqlite3-dev"])]),
        // Reading PDFs and turning their annotations and form values into Instant JSON.
        .target(
            name: "InstantPDF",
            dependencies: [
                "InstantJSON",
                "CZlib",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // The server as a library: routes, auth, storage.
        .target(
            name: "InstantServer",
            dependencies: [
                "InstantJSON",
                "InstantPDF",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "WSCore", package: "swift-websocket"),
                .product(name: "JWTKit", package: "jwt-kit"),
                "CSQLiteSettings",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            // The web viewer's pages, scripts and styles (docs/VIEWER.md).
            resources: [.copy("Viewer/Assets")]
        ),
        // Shipped test support: a live server on an ephemeral port, JWT minting, fixtures.
        .target(
            name: "InstantTesting",
            dependencies: [
                "InstantServer",
                "InstantJSON",
                "InstantPDF",
                "CZlib",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "instant",
            dependencies: [
                "Instant",
                "InstantJSON",
                "InstantPDF",
                "InstantServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // A complete app on the SDK (README, "Using the SDK"), compiled with everything else and run
        // against a live server by a test.
        .executableTarget(name: "instant-notes", dependencies: ["Instant"], path: "Examples/instant-notes"),
        // Replays PDFs through the reader; with `--sanitize fuzzer -Xswiftc -DFUZZING`, the
        // libFuzzer target (Fuzz/README.md).
        .executableTarget(name: "instant-pdf-fuzz", dependencies: ["InstantJSON", "InstantPDF"]),
        .executableTarget(
            name: "instant-bench",
            dependencies: [
                "Instant",
                "InstantJSON",
                "InstantPDF",
                "InstantServer",
                "InstantTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "InstantTests",
            dependencies: [
                "Instant", "InstantJSON", "InstantServer", "InstantTesting",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .testTarget(
            name: "InstantJSONTests",
            dependencies: [
                "InstantJSON",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "InstantPDFTests",
            dependencies: [
                "InstantPDF", "InstantJSON", "InstantTesting",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "InstantServerTests",
            dependencies: [
                "InstantServer",
                "InstantPDF",
                "InstantTesting",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        // The web viewer in a real Chromium (skipped without chromium and chromedriver).
        .testTarget(
            name: "InstantViewerTests",
            dependencies: ["Instant", "InstantJSON", "InstantServer", "InstantTesting"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
