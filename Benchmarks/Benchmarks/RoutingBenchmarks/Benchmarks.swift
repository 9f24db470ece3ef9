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
}
