// swift-tools-version:6.2
import PackageDescription

// Benchmarks live in their own package so the main build and CI stay fast.
// Run them with: cd Benchmarks && swift package benchmark
let package = Package(
    name: "TouchpointBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Touchpoint", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/OpenCombine/OpenCombine.git", from: "0.14.0"),
    ],
    targets: [
        .executableTarget(
            name: "EventsBenchmarks",
            dependencies: [
                .product(name: "Touchpoint", package: "Touchpoint"),
                .product(name: "TouchpointTesting", package: "Touchpoint"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/EventsBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "RoutingBenchmarks",
            dependencies: [
                .product(name: "Touchpoint", package: "Touchpoint"),
                .product(name: "TouchpointTesting", package: "Touchpoint"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/RoutingBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .target(
            name: "StoreWorkloads",
            dependencies: [
                .product(name: "Touchpoint", package: "Touchpoint"),
                .product(name: "OpenCombineShim", package: "OpenCombine", condition: .when(platforms: [.linux])),
            ],
            path: "Benchmarks/StoreWorkloads"
        ),
        .executableTarget(
            name: "StoreBenchmarks",
            dependencies: [
                "StoreWorkloads",
                .product(name: "Touchpoint", package: "Touchpoint"),
                .product(name: "TouchpointTesting", package: "Touchpoint"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/StoreBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "StoreInstructionCounts",
            dependencies: ["StoreWorkloads", .product(name: "Touchpoint", package: "Touchpoint")],
            path: "Benchmarks/StoreInstructionCounts"
        ),
        .executableTarget(
            name: "SurveysBenchmarks",
            dependencies: [
                .product(name: "Touchpoint", package: "Touchpoint"),
                .product(name: "TouchpointTesting", package: "Touchpoint"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/SurveysBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "DeliveryBenchmarks",
            dependencies: [
                .product(name: "Touchpoint", package: "Touchpoint"),
                .product(name: "TouchpointTesting", package: "Touchpoint"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/DeliveryBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // The collector the delivery benchmark sends to, in its own process.
        .executableTarget(
            name: "BenchmarkCollector",
            dependencies: [.product(name: "TouchpointTesting", package: "Touchpoint")],
            path: "Sources/BenchmarkCollector"
        ),
    ]
)
