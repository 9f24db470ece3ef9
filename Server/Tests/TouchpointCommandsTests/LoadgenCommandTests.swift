import ArgumentParser
import Foundation
import Testing
import TouchpointCollector
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCommands

/// `touchpoint loadgen` and the ``LoadGenerator`` behind it, against a real collector.
struct LoadgenCommandTests {
    /// Runs the built `touchpoint loadgen` against `collector`, with its credentials and `arguments`.
    static func loadgen(_ collector: RunningCollector, _ arguments: [String]) async throws -> ChildProcess.Result {
        try await ChildProcess.run(
            ChildProcess.builtProduct("touchpoint"),
            [
                "loadgen", "--collector", collector.baseURL.absoluteString, "--write-key", collector.writeKey,
                "--admin-token", collector.adminToken,
            ] + arguments, timeout: 120)
    }

    @Test func theGeneratorReportsNoLossAndNoDuplicates() async throws {
        let report = try await LocalCollector.run { collector in
            try await LoadGenerator(
                configuration: LoadGenConfiguration(
                    host: "127.0.0.1", port: collector.port, writeKey: collector.writeKey,
                    adminToken: collector.adminToken, clients: 3, events: 3000, batchSize: 50, resendRate: 0.2,
                    seed: 5)
            ).run()
        }
        #expect(report.eventsSent == 3000)
        #expect(report.failures == 0)
        #expect(report.stored == 3000)
        #expect(report.accepted == 3000)
        #expect(report.duplicatesReported == report.eventsResent)
        #expect(report.eventsResent > 0)
        #expect(report.lost == 0)
        #expect(report.duplicatesStored == 0)
        #expect(report.latencies.count == report.requests)
        #expect(report.summary.contains("lost 0, duplicates stored 0"))
    }

    /// The tool as an operator runs it: what it prints, and its exit status under `--strict`.
    @Test func theCommandPrintsWhatItSentAndWhatWasStored() async throws {
        try await LocalCollector.run { collector in
            let result = try await Self.loadgen(
                collector, ["--clients", "2", "--events", "1000", "--batch", "50", "--resend", "0.1", "--strict"])
            #expect(result.status == 0, "\(result.output) \(result.errors)")
            let lines = result.output.split(separator: "\n").map(String.init)
            #expect(
                lines.first
                    == "sending 1000 events in batches of 50 from 2 clients to \(collector.baseURL.absoluteString) …")
            for label in ["events sent:", "elapsed:", "throughput:", "latency (ms):", "responses:"] {
                #expect(lines.contains { $0.hasPrefix(label) }, "no \(label) line in \(result.output)")
            }
            #expect(lines.contains("stored (counted):  1000 → lost 0, duplicates stored 0"), "\(result.output)")
            let counts = try await LocalCollector.query("/v1/query/counts", of: collector)
            #expect(counts["events"] == 1000)
        }
    }

    @Test func pastTrafficFillsTheStoreWithFill() async throws {
        try await LocalCollector.run { collector in
            let result = try await Self.loadgen(
                collector, ["--clients", "2", "--fill", "1000", "--history-days", "7", "--strict"])
            #expect(result.status == 0, "\(result.output) \(result.errors)")
            #expect(result.output.hasPrefix("sending 1000 events in batches of 500 from 2 clients"), "\(result.output)")
            let people = try #require(
                try await LocalCollector.query("/v1/query/users?limit=1000", of: collector)["items"]?.arrayValue)
            #expect(!people.isEmpty, "sign-ins among the 10 users")
        }
    }

    @Test(
        .enabled(if: ProcessInfo.processInfo.environment["TOUCHPOINT_WRITE_KEY"] == nil, "a write key must be missing"),
        arguments: [
            (["--collector", "https://127.0.0.1:8080", "--write-key", "k"], "--collector: expected http://host:port"),
            (["--collector", "http://127.0.0.1:1"], "--write-key (or TOUCHPOINT_WRITE_KEY) is required"),
            (["--write-key", "k", "--fill", "0"], "--fill must be positive and --history-days 1 to 3650"),
            (["--write-key", "k", "--history-users", "5", "--history-days", "0"], "--history-users must be positive"),
        ])
    func badOptionsAreNamed(arguments: [String], message: String) async throws {
        let command = try LoadgenCommand.parse(arguments)
        await #expect {
            try await command.run()
        } throws: { error in
            (error as? ValidationError)?.message.hasPrefix(message) == true
        }
    }
}
