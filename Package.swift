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
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/OpenCombine/OpenCombine.git", from: "0.14.0"),
        // Test-only (the store's property tests).
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
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
                .product(name: "Logging", package: "swift-log"),
            ],
            // The privacy manifest an app that ships the SDK needs (checked by TouchpointTests).
            resources: [.copy("PrivacyInfo.xcprivacy")]
        ),
        // Apple-only SwiftUI views; on Linux every file compiles to nothing.
        .target(
            name: "TouchpointUI",
            dependencies: ["TouchpointEvents", "TouchpointPromo", "TouchpointStore", "TouchpointSurveys"]
        ),

        // MARK: Test support shipped as a library
        .target(
            name: "TouchpointTesting",
            dependencies: ["TouchpointCore", "TouchpointEvents", "TouchpointRouting"]
        ),

        // MARK: Tests (each module's tests: that module and TouchpointTesting)
        .testTarget(
            name: "TouchpointTests",
            dependencies: ["Touchpoint", "TouchpointTesting"]
        ),
        .testTarget(
            name: "TouchpointCoreTests",
            dependencies: ["TouchpointCore", "TouchpointTesting"]
        ),
        .testTarget(
            name: "TouchpointTestingTests",
            dependencies: ["TouchpointTesting", "TouchpointCore", "TouchpointEvents"]
        ),
        .testTarget(
            name: "TouchpointEventsTests",
            // The record loop runs as a child process that the kill tests kill.
            dependencies: ["TouchpointEvents", "TouchpointTesting", "TouchpointRecordLoop"]
        ),
        .executableTarget(
            name: "TouchpointRecordLoop",
            dependencies: ["TouchpointEvents"],
            path: "Tests/TouchpointRecordLoop"
        ),
        .testTarget(
            name: "TouchpointDeliveryTests",
            dependencies: [
                "TouchpointDelivery", "TouchpointTesting",
                .product(name: "InMemoryLogging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "TouchpointPromoTests",
            dependencies: [
                "TouchpointPromo", "TouchpointUI", "TouchpointTesting",
                "Touchpoint",  // the seed's samples import the umbrella, as an app does
                .product(name: "InMemoryLogging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "TouchpointRoutingTests",
            dependencies: ["TouchpointRouting", "TouchpointTesting"]
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
                "TouchpointStore", "TouchpointTesting",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "TouchpointSurveysTests",
            dependencies: ["Touchpoint", "TouchpointSurveys", "TouchpointTesting", "TouchpointUI"],
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
