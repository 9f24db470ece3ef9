// swift-tools-version:6.2
import PackageDescription

/// Platforms where Combine is missing and OpenCombine stands in for it.
let openCombinePlatforms: [Platform] = [.linux, .android, .windows, .openbsd]

let package = Package(
    name: "Touchpoint",
    platforms: [
        .macOS(.v14),
        .iOS(.v17),
        .tvOS(.v17),
        .watchOS(.v10),
        .visionOS(.v1),
    ],
    products: [
        .library(name: "Touchpoint", targets: ["Touchpoint"]),
        .library(name: "TouchpointTesting", targets: ["TouchpointTesting"]),
        .library(name: "TouchpointUI", targets: ["TouchpointUI"]),
        .executable(name: "touchpoint", targets: ["TouchpointCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/OpenCombine/OpenCombine.git", from: "0.14.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        // Collector only (never in SDK targets).
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/vapor/sqlite-nio.git", from: "1.13.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    ],
    targets: [
        // MARK: SDK
        .systemLibrary(
            name: "CZlib",
            path: "Sources/CZlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .target(
            name: "TouchpointCore",
            dependencies: [
                "CZlib",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "TouchpointEvents",
            dependencies: [
                "TouchpointCore",
                .product(
                    name: "OpenCombineShim",
                    package: "OpenCombine",
                    condition: .when(platforms: openCombinePlatforms)
                ),
            ]
        ),
        .target(
            name: "TouchpointDelivery",
            dependencies: ["TouchpointCore", "TouchpointEvents"]
        ),
        .target(
            name: "TouchpointRouting",
            dependencies: [
                "TouchpointCore",
                "TouchpointEvents",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "TouchpointPromo",
            dependencies: [
                "TouchpointCore",
                "TouchpointEvents",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "TouchpointStore",
            dependencies: [
                "TouchpointCore",
                .product(name: "Logging", package: "swift-log"),
                .product(
                    name: "OpenCombineShim",
                    package: "OpenCombine",
                    condition: .when(platforms: openCombinePlatforms)
                ),
            ]
        ),
        .target(
            name: "TouchpointSurveys",
            dependencies: [
                "TouchpointCore",
                "TouchpointEvents",
                .product(name: "Logging", package: "swift-log"),
                .product(
                    name: "OpenCombineShim",
                    package: "OpenCombine",
                    condition: .when(platforms: openCombinePlatforms)
                ),
            ],
            resources: [.copy("Resources/survey.schema.json")]
        ),
        .target(
            name: "Touchpoint",
            dependencies: [
                "TouchpointCore", "TouchpointEvents", "TouchpointDelivery", "TouchpointRouting", "TouchpointPromo",
                "TouchpointStore", "TouchpointSurveys", "TouchpointUI",
            ]
        ),
        // Apple-only SwiftUI views; on Linux every file compiles to nothing.
        .target(
            name: "TouchpointUI",
            dependencies: ["TouchpointEvents", "TouchpointPromo", "TouchpointStore", "TouchpointSurveys"]
        ),

        // MARK: Collector (server)
        .target(
            name: "TouchpointCollector",
            dependencies: [
                "TouchpointCore",
                .product(name: "Hummingbird", package: "hummingbird"),
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
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: Test support shipped as a library
        .target(
            name: "TouchpointTesting",
            dependencies: ["TouchpointCore", "TouchpointEvents", "TouchpointRouting"]
        ),

        // MARK: Tool
        .executableTarget(
            name: "TouchpointCLI",
            dependencies: [
                "Touchpoint",
                "TouchpointCollector",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // MARK: Tests
        .testTarget(
            name: "TouchpointCoreTests",
            dependencies: ["TouchpointCore", "TouchpointTesting"]
        ),
        .testTarget(
            name: "TouchpointTestingTests",
            dependencies: ["TouchpointTesting", "TouchpointCore"]
        ),
        .testTarget(
            name: "TouchpointEventsTests",
            dependencies: ["Touchpoint", "TouchpointTesting", "TouchpointCLI"]
        ),
        .testTarget(
            name: "TouchpointCollectorTests",
            dependencies: [
                "TouchpointCollector",
                "TouchpointTesting",
                "TouchpointCLI",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "TouchpointDeliveryTests",
            dependencies: [
                "TouchpointDelivery", "Touchpoint", "TouchpointTesting", "TouchpointCLI",
                .product(name: "InMemoryLogging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "TouchpointPromoTests",
            dependencies: [
                "Touchpoint", "TouchpointPromo", "TouchpointUI", "TouchpointTesting", "TouchpointCLI",
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "TouchpointRoutingTests",
            dependencies: ["Touchpoint", "TouchpointTesting"]
        ),
        // The seed README's samples, compiled as an app would: once in Swift 5 mode, once in Swift 6.
        .testTarget(
            name: "TouchpointRoutingSwift5SampleTests",
            dependencies: ["Touchpoint", "TouchpointTesting"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .testTarget(
            name: "TouchpointRoutingSwift6SampleTests",
            dependencies: ["Touchpoint", "TouchpointTesting"]
        ),
        .testTarget(
            name: "TouchpointStoreTests",
            dependencies: [
                "TouchpointStore", "TouchpointTesting", "TouchpointCLI",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        // Across modules: the store's HTTP backend and delivery against a real collector.
        .testTarget(
            name: "TouchpointIntegrationTests",
            dependencies: ["Touchpoint", "TouchpointCollector", "TouchpointTesting"]
        ),
        .testTarget(
            name: "TouchpointSurveysTests",
            dependencies: ["Touchpoint", "TouchpointSurveys", "TouchpointTesting", "TouchpointCLI", "TouchpointUI"],
            resources: [.copy("Fixtures")]
        ),
    ]
)

/// Targets written as app code is (the seed README's samples use bare protocol types).
let appStyleTargets: Set<String> = ["TouchpointRoutingSwift5SampleTests", "TouchpointRoutingSwift6SampleTests"]

for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    if !appStyleTargets.contains(target.name) { settings.append(.enableUpcomingFeature("ExistentialAny")) }
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    settings.append(.treatAllWarnings(as: .error))
    target.swiftSettings = settings
}
