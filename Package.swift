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
    ],
    targets: [
        // MARK: SDK
        .target(
            name: "TouchpointCore",
            dependencies: [
                .product(name: "Logging", package: "swift-log")
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
            dependencies: ["TouchpointCore", "TouchpointEvents", "TouchpointSurveys"]
        ),
        // SwiftUI views (Apple platforms; every file is inside `#if canImport(SwiftUI)`).
        .target(
            name: "TouchpointUI",
            dependencies: ["TouchpointEvents", "TouchpointSurveys"]
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
            name: "TouchpointSurveysTests",
            dependencies: ["Touchpoint", "TouchpointSurveys", "TouchpointTesting", "TouchpointCLI", "TouchpointUI"],
            resources: [.copy("Fixtures")]
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
