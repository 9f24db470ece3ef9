import Benchmark
import Foundation
import Touchpoint
import TouchpointTesting

/// Drains 1,000,000 queued events to a collector running in another process on 127.0.0.1.
///
/// Setup records the events once (100 sessions of 10,000, 5 users); each iteration delivers all
/// of them with a fresh destination (a new write key, so a new cursor) and checks the count.
let benchmarks: @Sendable () -> Void = {
    let eventCount = 1_000_000

    Benchmark(
        "drain 1,000,000 queued events",
        configuration: .init(
            metrics: [.wallClock, .peakMemoryResident, .cpuTotal],
            timeUnits: .milliseconds,
            warmupIterations: 0,
            maxDuration: .seconds(600),
            maxIterations: 3
        )
    ) { benchmark, fixture in
        let compressed = ProcessInfo.processInfo.environment["DELIVERY_BENCHMARK_GZIP"] != "0"
        var configuration = DeliveryConfiguration()
        configuration.dispatchInterval = -1
        configuration.maximumRequestsPerMinute = nil
        configuration.reachability = nil
        configuration.gzipThreshold = compressed ? 1024 : nil
        let dispatcher = EventDispatcher(
            writeKey: UUID().uuidString, endpoint: fixture.collectorURL, recorder: fixture.recorder,
            configuration: configuration)
        benchmark.startMeasurement()
        let report = try await dispatcher.dispatch()
        benchmark.stopMeasurement()
        await dispatcher.shutdown()
        guard report.deliveredEvents == eventCount else {
            throw BenchmarkFailure(reason: "delivered \(report.deliveredEvents) of \(eventCount) events")
        }
    } setup: {
        try await DeliveryFixture.make(events: eventCount)
    }
}

struct BenchmarkFailure: Error {
    let reason: String
}

/// The recorded log and the collector process, shared by the iterations.
final class DeliveryFixture: @unchecked Sendable {
    // Safe: every member is set once in `make` and only read afterwards.
    let directory: TemporaryDirectory
    let recorder: EventRecorder
    let collector: Process
    let collectorInput: Pipe
    let collectorURL: URL

    private init(directory: TemporaryDirectory, recorder: EventRecorder, collector: Process, input: Pipe, url: URL) {
        self.directory = directory
        self.recorder = recorder
        self.collector = collector
        collectorInput = input
        collectorURL = url
    }

    deinit {
        try? collectorInput.fileHandleForWriting.close()
        collector.waitUntilExit()
    }

    static func make(events: Int) async throws -> DeliveryFixture {
        let directory = try TemporaryDirectory(prefix: "bench-delivery")
        var configuration = EventRecorderConfiguration()
        configuration.retention = .keepEverything
        let recorder = EventRecorder(directory: directory.url, configuration: configuration)
        let sessions = 100
        for session in 0..<sessions {
            await recorder.startSession(userID: "user-\(session % 5)")
            for index in 0..<(events / sessions) {
                recorder.record(
                    "screen_view",
                    properties: ["screen": "Home", "index": .int(index), "session": .int(session), "premium": false])
            }
        }
        try await recorder.flush()

        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            .deletingLastPathComponent().appendingPathComponent("BenchmarkCollector")
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        guard let line = String(data: output.fileHandleForReading.availableData, encoding: .utf8),
            line.hasPrefix("port "), let port = Int(line.dropFirst(5).trimmingCharacters(in: .whitespacesAndNewlines))
        else { throw BenchmarkFailure(reason: "the benchmark collector did not start") }
        return DeliveryFixture(
            directory: directory, recorder: recorder, collector: process, input: input,
            url: URL(string: "http://127.0.0.1:\(port)")!)
    }
}
