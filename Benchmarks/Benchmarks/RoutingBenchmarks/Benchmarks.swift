import Benchmark
import Foundation
import Touchpoint
import TouchpointTesting

/// An adapter that does nothing, so the numbers are the tracker's own.
final class NoopAdapter: AnalyticsAdapter, Sendable {
    let name: String
    init(name: String) { self.name = name }
    func configure() {}
    func track(event: any TrackableEvent) {}
    func track(property: any TrackableProperty) {}
}

struct ButtonTapped: TrackableEvent {
    let index: Int
    let identifier = EventIdentifier(object: "Button", action: "Tapped")
    var metadata: [String: Any] { ["screen": "Home", "count": index] }
}

/// A recorder in a temporary folder, with or without a tracker feeding five adapters.
final class RoutingFixture: @unchecked Sendable {
    // Safe: the runner calls `setUp`, then the benchmark's iterations, then `tearDown`, one after
    // the other; nothing else touches these.
    var directory: TemporaryDirectory?
    var recorder: EventRecorder?
    var tracker: GlobalTracker?

    func setUp(adapters: Int?) throws {
        let directory = try TemporaryDirectory(prefix: "bench-routing")
        let recorder = EventRecorder(directory: directory.url)
        if let adapters {
            let tracker = GlobalTracker(recorder: recorder)
            tracker.startTracking(adapters: (0..<adapters).map { NoopAdapter(name: "Noop\($0)") })
            self.tracker = tracker
        }
        self.directory = directory
        self.recorder = recorder
    }

    func tearDown() async {
        if let tracker {
            await tracker.waitUntilDelivered(timeout: .seconds(30))
            tracker.stopTracking()
        }
        tracker = nil
        recorder = nil
        directory = nil
    }
}

/// Two recorders side by side, one with a tracker feeding five adapters, recorded into in
/// alternating blocks so that both see the same machine load.
final class PairedFixture: @unchecked Sendable {
    // Safe: as for `RoutingFixture`, the runner calls setUp, the iterations and tearDown in turn.
    let plain = RoutingFixture()
    let routed = RoutingFixture()
    /// Per sample: with minus without, in nanoseconds per event.
    var differences: [Double] = []

    func setUp() throws {
        try plain.setUp(adapters: nil)
        try routed.setUp(adapters: 5)
        differences = []
    }

    func tearDown() async {
        await plain.tearDown()
        await routed.tearDown()
        let sorted = differences.sorted()
        guard !sorted.isEmpty else { return }
        func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
        let line = String(
            format:
                "paired difference (with - without), ns per event: p25 %.0f, p50 %.0f, p75 %.0f, p99 %.0f (%d samples)\n",
            percentile(0.25), percentile(0.5), percentile(0.75), percentile(0.99), sorted.count)
        FileHandle.standardError.write(Data(line.utf8))
    }
}

let withoutMetric = BenchmarkMetric.custom("record without tracker (ns/event)", useScalingFactor: false)
let withMetric = BenchmarkMetric.custom("record with tracker, 5 adapters (ns/event)", useScalingFactor: false)

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput], scalingFactor: .kilo, maxDuration: .seconds(4))

    /// `record` in a loop: the baseline without a tracker, and with one feeding five adapters.
    func recordBenchmark(_ name: String, adapters: Int?) {
        let fixture = RoutingFixture()
        Benchmark(
            name,
            closure: { benchmark in
                let recorder = fixture.recorder!
                for index in benchmark.scaledIterations {
                    recorder.record("button_tap", properties: ["screen": "Home", "count": .int(index)])
                }
            },
            setup: { try fixture.setUp(adapters: adapters) },
            teardown: { await fixture.tearDown() })
    }
    recordBenchmark("record, no tracker", adapters: nil)
    recordBenchmark("record, tracker with 5 adapters", adapters: 5)

    // The tracker's part alone: the callback the recorder makes for each event, without the disk.
    let fanOut = RoutingFixture()
    Benchmark(
        "fan-out callback only, 5 adapters",
        closure: { benchmark in
            let recorder = fanOut.recorder!
            let tracker = fanOut.tracker!
            let event = Event(
                name: "button_tap", sessionId: UUID(), userId: nil, anonymousId: "bench",
                properties: ["screen": "Home", "count": .int(1)])
            for _ in benchmark.scaledIterations {
                tracker.eventRecorder(recorder, didRecord: event, attachment: nil)
            }
        },
        setup: { try fanOut.setUp(adapters: 5) },
        teardown: { await fanOut.tearDown() })

    // What `trigger()` adds on the caller's thread before `record`: the metadata's conversion.
    Benchmark("convert metadata, 2 values") { benchmark in
        for index in benchmark.scaledIterations {
            blackHole(MetadataConversion(ButtonTapped(index: index).metadata))
        }
    }

    let typed = RoutingFixture()
    Benchmark(
        "trigger typed event, 5 adapters",
        closure: { benchmark in
            let tracker = typed.tracker!
            for index in benchmark.scaledIterations {
                tracker.trigger(ButtonTapped(index: index))
            }
        },
        setup: { try typed.setUp(adapters: 5) },
        teardown: { await typed.tearDown() })

    // The comparison the target is about: the same `record` call with and without the tracker,
    // interleaved in blocks of 50 (alternating which goes first) so that load changes hit both.
    let paired = PairedFixture()
    Benchmark(
        "record with and without tracker, paired",
        configuration: .init(metrics: [withoutMetric, withMetric], scalingFactor: .one),
        closure: { benchmark in
            let plain = paired.plain.recorder!
            let routed = paired.routed.recorder!
            var without: UInt64 = 0
            var with: UInt64 = 0
            for block in 0..<20 {
                let order = block % 2 == 0 ? [plain, routed] : [routed, plain]
                for recorder in order {
                    let start = DispatchTime.now().uptimeNanoseconds
                    for index in 0..<50 {
                        recorder.record("button_tap", properties: ["screen": "Home", "count": .int(index)])
                    }
                    let elapsed = DispatchTime.now().uptimeNanoseconds - start
                    if recorder === plain { without += elapsed } else { with += elapsed }
                }
            }
            benchmark.measurement(withoutMetric, Int(without / 500))
            benchmark.measurement(withMetric, Int(with / 500))
            paired.differences.append((Double(with) - Double(without)) / 500)
        },
        setup: { try paired.setUp() },
        teardown: { await paired.tearDown() })
}
