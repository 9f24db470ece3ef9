import Benchmark
import Foundation
import Touchpoint
import TouchpointTesting

/// Drains 1,000,000 queued events to a receiver running in another process on 127.0.0.1, so the
/// memory and CPU measured are the SDK's alone.
///
/// Setup records the events once (100 sessions of 10,000, 5 users); each iteration delivers all
/// of them with a fresh destination (a new write key, so a new cursor) and checks the count.
let benchmarks: @Sendable () -> Void = {
    // DELIVERY_BENCHMARK_EVENTS scales the runs down for profiling.
    let eventCount = ProcessInfo.processInfo.environment["DELIVERY_BENCHMARK_EVENTS"].flatMap(Int.init) ?? 1_000_000
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .peakMemoryResident, .cpuTotal],
        timeUnits: .milliseconds,
        warmupIterations: 0,
        maxDuration: .seconds(600),
        maxIterations: 3
    )

    // The whole pipeline: the collector double decompresses, parses, validates and deduplicates.
    Benchmark("drain 1,000,000 queued events to the collector double", configuration: configuration) {
        benchmark,
        fixture in
        try await drain(fixture, benchmark: benchmark, expecting: eventCount)
    } setup: {
        try await DeliveryFixture.make(events: eventCount, receiverArguments: [])
    }

    // The SDK's own ceiling: the receiver answers 200 without reading the batch.
    Benchmark("drain 1,000,000 queued events to a receiver that only acknowledges", configuration: configuration) {
        benchmark,
        fixture in
        try await drain(fixture, benchmark: benchmark, expecting: eventCount)
    } setup: {
        try await DeliveryFixture.make(events: eventCount, receiverArguments: ["--acknowledge-only"])
    }

    // The real collector (`touchpoint serve`, SQLite), a fresh one per iteration. Needs the
    // release `touchpoint` binary: `swift build -c release --package-path Server --product touchpoint`
    // from the repository's root.
    if let touchpoint = RealCollector.binary {
        Benchmark("drain 1,000,000 queued events to touchpoint serve (SQLite)", configuration: configuration) {
            benchmark,
            fixture in
            let collector = try RealCollector(binary: touchpoint, directory: fixture.directory.url)
            defer { collector.stop() }
            try await drain(
                fixture, benchmark: benchmark, expecting: eventCount, endpoint: collector.url,
                writeKey: RealCollector.writeKey)
        } setup: {
            try await DeliveryFixture.make(events: eventCount, receiverArguments: ["--acknowledge-only"])
        }
    }
}

/// A `touchpoint serve` process with its own data directory on a free port.
struct RealCollector {
    static let writeKey = "benchmark-write-key"

    /// `TOUCHPOINT_BINARY`, else the Server package's release build.
    static var binary: URL? {
        let candidates = [
            ProcessInfo.processInfo.environment["TOUCHPOINT_BINARY"],
            FileManager.default.currentDirectoryPath + "/../Server/.build/release/touchpoint",
        ].compactMap { $0 }
        return candidates.map { URL(fileURLWithPath: $0) }.first {
            FileManager.default.isExecutableFile(atPath: $0.path)
        }
    }

    let process = Process()
    let url: URL

    init(binary: URL, directory: URL) throws {
        let data = directory.appendingPathComponent("collector-\(UUID().uuidString)")
        process.executableURL = binary
        process.arguments = [
            "serve", "--port", "0", "--data", data.path, "--write-key", Self.writeKey, "--log-level", "warning",
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // The first line: "Touchpoint collector listening on http://127.0.0.1:PORT".
        var text = ""
        while !text.contains("\n") {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw BenchmarkFailure(reason: "touchpoint serve exited: \(text)") }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let address = text.split(separator: "\n").first?.split(separator: " ").last,
            let url = URL(string: String(address))
        else { throw BenchmarkFailure(reason: "touchpoint serve printed no address: \(text)") }
        self.url = url
    }

    func stop() {
        process.interrupt()
        process.waitUntilExit()
    }
}

/// Delivers every recorded event with a fresh destination (a new write key: a new cursor).
func drain(
    _ fixture: DeliveryFixture, benchmark: Benchmark, expecting count: Int, endpoint: URL? = nil,
    writeKey: String = UUID().uuidString
) async throws {
    var configuration = DeliveryConfiguration()
    configuration.dispatchInterval = -1
    configuration.maximumRequestsPerMinute = nil
    configuration.reachability = nil
    if ProcessInfo.processInfo.environment["DELIVERY_BENCHMARK_GZIP"] == "0" { configuration.gzipThreshold = nil }
    let dispatcher = EventDispatcher(
        writeKey: writeKey, endpoint: endpoint ?? fixture.collectorURL, recorder: fixture.recorder,
        configuration: configuration)
    benchmark.startMeasurement()
    let report = try await dispatcher.dispatch()
    benchmark.stopMeasurement()
    await dispatcher.shutdown()
    guard report.deliveredEvents == count else {
        throw BenchmarkFailure(reason: "delivered \(report.deliveredEvents) of \(count) events")
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

    static func make(events: Int, receiverArguments: [String]) async throws -> DeliveryFixture {
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
        // Built beside this benchmark: `swift build -c release --product BenchmarkCollector`.
        let directories = [
            Bundle.main.executableURL?.resolvingSymlinksInPath().deletingLastPathComponent(),
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            URL(fileURLWithPath: FileManager.default.currentDirectoryPath + "/.build/release"),
        ].compactMap { $0 }
        guard
            let collector = directories.map({ $0.appendingPathComponent("BenchmarkCollector") })
                .first(where: { FileManager.default.isExecutableFile(atPath: $0.path) })
        else { throw BenchmarkFailure(reason: "BenchmarkCollector not found in \(directories)") }
        process.executableURL = collector
        process.arguments = receiverArguments
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
