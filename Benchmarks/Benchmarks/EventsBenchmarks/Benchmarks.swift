import Benchmark
import Foundation
import Touchpoint
import TouchpointTesting

// Targets (BENCHMARKS.md): median record ≤ 0.5 µs and p99 ≤ 5 µs on the caller's thread,
// ≥ 1,000,000 events/s on one thread, start-up ≤ 20 ms with 10,000 sessions on disk,
// reading 1,000,000 events in ≤ 64 MB resident memory.

/// A log with many sessions, made once per benchmark process.
final class PreparedLog: Sendable {
    let directory: TemporaryDirectory

    init(sessions: Int, eventsPerSession: Int) throws {
        directory = try TemporaryDirectory(prefix: "bench-log")
        var configuration = EventRecorderConfiguration()
        configuration.retention = .keepEverything
        let clock = ManualClock()
        configuration.clock = clock
        let recorder = EventRecorder(directory: directory.url, configuration: configuration)
        let semaphore = DispatchSemaphore(value: 0)
        Task {
            for session in 0..<sessions {
                await recorder.startSession(userID: "user-\(session % 500)")
                for index in 0..<eventsPerSession {
                    recorder.record("screen_view", properties: ["screen": "Home", "index": .int(index)])
                }
                clock.advance(by: 1)
            }
            await recorder.endSession()
            semaphore.signal()
        }
        semaphore.wait()
    }
}

/// A recorder over its own temporary directory, kept alive together.
final class RecorderState: Sendable {
    let directory: TemporaryDirectory
    let recorder: EventRecorder

    init(_ prefix: String) throws {
        directory = try TemporaryDirectory(prefix: prefix)
        recorder = EventRecorder(directory: directory.url)
    }
}

let properties: [String: EventValue] = ["screen": "Home", "count": 1, "success": true]

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .peakMemoryResident],
        warmupIterations: 10,
        maxDuration: .seconds(10))

    // One record per sample: the distribution of single calls, as the caller's thread sees them.
    Benchmark(
        "record latency (one call per sample)",
        configuration: .init(
            metrics: [.wallClock], warmupIterations: 1_000, maxDuration: .seconds(10), maxIterations: 500_000)
    ) { _, state in
        state.recorder.record("button_tap", properties: properties)
    } setup: {
        try RecorderState("bench-latency")
    }

    Benchmark("record throughput, one thread", configuration: .init(scalingFactor: .kilo)) { benchmark, state in
        for index in benchmark.scaledIterations {
            state.recorder.record("button_tap", properties: ["screen": "Home", "count": .int(index)])
        }
    } setup: {
        try RecorderState("bench-throughput")
    }

    Benchmark("record throughput, two threads", configuration: .init(scalingFactor: .kilo)) { benchmark, state in
        let half = benchmark.scaledIterations.count / 2
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            for index in 0..<half {
                state.recorder.record("button_tap", properties: ["screen": "Home", "count": .int(index)])
            }
        }
    } setup: {
        try RecorderState("bench-threads")
    }

    // Creating a recorder and recording the first event (which checks for a session to resume
    // and starts one) over a log that already holds 10,000 sessions.
    Benchmark(
        "start-up and first record, 10,000 sessions on disk",
        configuration: .init(metrics: [.wallClock], maxDuration: .seconds(10), maxIterations: 200)
    ) { benchmark, log in
        for _ in benchmark.scaledIterations {
            let recorder = EventRecorder(directory: log.directory.url)
            blackHole(recorder.record("app_open"))
        }
    } setup: {
        try PreparedLog(sessions: 10_000, eventsPerSession: 2)
    }

    // Streams 1,000,000 events; the resident memory is the number to watch.
    Benchmark(
        "read 1,000,000 events",
        configuration: .init(
            metrics: [.wallClock, .peakMemoryResident, .throughput], scalingFactor: .mega, maxDuration: .seconds(60),
            maxIterations: 3)
    ) { benchmark, log in
        var count = 0
        EventLogReader(directory: log.directory.url).forEachEvent { event in
            count += event.name.isEmpty ? 0 : 1
            return true
        }
        precondition(count == 1_000_000, "read \(count) events")
    } setup: {
        try PreparedLog(sessions: 100, eventsPerSession: 10_000)
    }
}
