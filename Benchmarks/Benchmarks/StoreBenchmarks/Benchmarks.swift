import Benchmark
import Foundation
import StoreWorkloads
import Touchpoint
import TouchpointTesting

/// Scenario-store benchmarks: the cost of a write as subscribers and live expressions grow, and
/// how many file writes a storm of sets to a file scope costs.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .instructions, .mallocCountTotal], timeUnits: .nanoseconds, maxDuration: .seconds(5))

    // MARK: set + notification

    for (unrelated, affected) in [(0, 0), (10_000, 0), (0, 1), (10_000, 1), (10_000, 10), (10_000, 100)] {
        Benchmark(
            "set + notify, \(unrelated) unrelated subscribers, \(affected) affected",
            configuration: .init(scalingFactor: .kilo)
        ) { benchmark, context in
            for index in benchmark.scaledIterations {
                context.store.set("cart.total", .integer(index))
            }
        } setup: {
            SubscribedStore(unrelated: unrelated, affected: affected)
        }
    }

    // MARK: live expressions

    Benchmark(
        "live expression chain, 50 deep (one set recomputes 50 nodes)", configuration: .init(scalingFactor: .kilo)
    ) {
        benchmark, store in
        for index in benchmark.scaledIterations {
            store.set("n0", .integer(index))
        }
        precondition(store.get("n50") == .integer(benchmark.scaledIterations.upperBound - 1 + 50))
    } setup: {
        chainStore(depth: 50)
    }

    Benchmark(
        "set without expressions or subscribers (baseline for the chain)", configuration: .init(scalingFactor: .kilo)
    ) {
        benchmark, store in
        for index in benchmark.scaledIterations {
            store.set("n0", .integer(index))
        }
    } setup: {
        chainStore(depth: 0)
    }

    // MARK: write storm

    let fileWrites = BenchmarkMetric.custom("file writes", polarity: .prefersSmaller, useScalingFactor: false)
    Benchmark(
        "write storm: 100,000 sets to a file scope, then flush",
        configuration: .init(metrics: [.wallClock, fileWrites], timeUnits: .milliseconds, maxIterations: 10)
    ) { benchmark in
        let directory = try TemporaryDirectory(prefix: "bench-store")
        let store = DefaultStore(appID: "bench")
        let file = store.scoped(.file(url: directory.appending("storm.json")))
        benchmark.startMeasurement()
        for index in 0..<100_000 {
            file.set("screen.counter", .integer(index))
        }
        file.flush()
        benchmark.stopMeasurement()
        benchmark.measurement(fileWrites, file.persistenceStatistics.writes)
    }
}
