import Benchmark
import Foundation
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
            blackHole(context.delivered.withLock { $0 })
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

/// A store with `unrelated` subscribers on other key paths and `affected` ones on `cart.total`.
final class SubscribedStore: Sendable {
    let store: ScopedStore
    let delivered = Locked(0)
    private let cancellables: Locked<[AnyCancellable]>

    init(unrelated: Int, affected: Int) {
        store = DefaultStore(appID: "bench").scoped(.scenarioSession(id: "bench"))
        var cancellables: [AnyCancellable] = []
        let delivered = self.delivered
        for index in 0..<unrelated {
            let path = "screens.s\(index % 100).widgets[\(index / 100)].title"
            cancellables.append(store.publisher(for: path).sink { _ in delivered.withLock { $0 += 1 } })
        }
        for _ in 0..<affected {
            cancellables.append(store.publisher(for: "cart.total").sink { _ in delivered.withLock { $0 += 1 } })
        }
        self.cancellables = Locked(cancellables)
    }
}

/// A store where `n1 = n0 + 1`, `n2 = n1 + 1`, … up to `n<depth>`.
func chainStore(depth: Int) -> ScopedStore {
    let store = DefaultStore(appID: "bench").scoped(.appMemory)
    store.set("n0", 0)
    for level in stride(from: depth, through: 1, by: -1) {
        let input = "n\(level - 1)"
        store.registerLiveExpression(
            LiveExpression(id: "e\(level)", outputKeyPath: "n\(level)", dependsOn: [input]) { get in
                guard case .integer(let value)? = get(input) else { return nil }
                return .integer(value + 1)
            })
    }
    return store
}
