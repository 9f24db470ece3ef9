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
        .executable(name: "touchpoint", targets: ["TouchpointCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/OpenCombine/OpenCombine.git", from: "0.14.0"),
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
            name: "Touchpoint",
            dependencies: ["TouchpointCore", "TouchpointEvents", "TouchpointDelivery"]
        ),

        // MARK: Test support shipped as a library
        .target(
            name: "TouchpointTesting",
            dependencies: ["TouchpointCore", "TouchpointEvents"]
        ),

        // MARK: Tool
        .executableTarget(
            name: "TouchpointCLI",
            dependencies: [
                "Touchpoint",
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
            name: "TouchpointDeliveryTests",
            dependencies: [
                "TouchpointDelivery", "Touchpoint", "TouchpointTesting", "TouchpointCLI",
                .product(name: "InMemoryLogging", package: "swift-log"),
            ]
        ),
    ]
)

for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    settings.append(.treatAllWarnings(as: .error))
    target.swiftSettings = settings
}
