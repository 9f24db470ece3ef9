// swift-tools-version:6.2
import PackageDescription

// The collector and the `touchpoint` tool: a package of their own, so an app that depends on the
// SDK (the package one folder up) never resolves a server package. This one depends on the SDK by
// path.
let package = Package(
    name: "TouchpointServer",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "TouchpointCollector", targets: ["TouchpointCollector"]),
        .library(name: "TouchpointCommands", targets: ["TouchpointCommands"]),
        .executable(name: "touchpoint", targets: ["TouchpointCLI"]),
    ],
    dependencies: [
        .package(name: "Touchpoint", path: ".."),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        // Exact: the collector calls the SQLite this package builds through its C module
        // (VaporCSQLite), which is not one of its products, so a release that renames that module
        // or its prefixed symbols must be taken on purpose. SQLiteVersionTests names the SQLite
        // version and the compile options the collector relies on.
        .package(url: "https://github.com/vapor/sqlite-nio.git", exact: "1.13.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.24.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // ClickHouse's HTTP interface, when events are kept there (`--events clickhouse://…`).
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
    ],
    targets: [
        .target(
            name: "TouchpointCollector",
            dependencies: [
                // For TouchpointCore (the JSON value, gzip, logging): the SDK's one product.
                .product(name: "Touchpoint", package: "Touchpoint"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                // For the SQLite it builds (its C module VaporCSQLite), which the collector calls
                // directly (`SQLiteConnection`): nothing to install, prepared statements reused.
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                // /metrics: swift-metrics' counters and timers into a swift-prometheus registry.
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // Everything the tool does, as a library (tested in process); `TouchpointCLI` only calls it.
        .target(
            name: "TouchpointCommands",
            dependencies: [
                "TouchpointCollector",
                .product(name: "Touchpoint", package: "Touchpoint"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "TouchpointCLI",
            dependencies: [
                "TouchpointCommands",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // MARK: Tests
        .testTarget(
            name: "TouchpointCollectorTests",
            dependencies: [
                "TouchpointCollector",
                "TouchpointCommands",
                "TouchpointCLI",  // the tests start `touchpoint serve` processes
                .product(name: "TouchpointTesting", package: "Touchpoint"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // Each database's migrated schema, read by SchemaDumpTests.
            exclude: ["Storage/Schema/Dumps"]
        ),
        .testTarget(
            name: "TouchpointCommandsTests",
            dependencies: [
                "TouchpointCommands",
                "TouchpointCLI",  // a few tests run the built tool the way a user does
                .product(name: "Touchpoint", package: "Touchpoint"),
                .product(name: "TouchpointTesting", package: "Touchpoint"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Across modules: the SDK (delivery, the store's HTTP backend, the setup call) against a
        // real collector.
        .testTarget(
            name: "TouchpointIntegrationTests",
            dependencies: [
                "TouchpointCollector",
                .product(name: "Touchpoint", package: "Touchpoint"),
                .product(name: "TouchpointTesting", package: "Touchpoint"),
                // An app that uses swift-http-types beside Touchpoint (NameClashTests).
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
    ]
)

for target in package.targets {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    settings.append(.treatAllWarnings(as: .error))
    target.swiftSettings = settings
}
