import ArgumentParser
import Foundation
import TouchpointCollector

/// `touchpoint loadgen`: sends realistic batches to a collector and reports throughput and latency.
struct LoadgenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loadgen",
        abstract: "Send realistic event batches from concurrent clients to a collector; report events/s and latency.",
        discussion: """
            With --admin-token the collector's own event count is read before and after the run, so \
            the report shows events lost and stored twice (run it alone against the source).
            """
    )

    @Option(help: "The collector's base URL.")
    var collector: String = "http://127.0.0.1:8080"

    @Option(help: "Write key to send with (env TOUCHPOINT_WRITE_KEY).")
    var writeKey: String?

    @Option(help: "Admin token, to count stored events before and after (env TOUCHPOINT_ADMIN_TOKEN).")
    var adminToken: String?

    @Option(help: "Concurrent clients (threads, one connection each).")
    var clients: Int = 8

    @Option(help: "Unique events to send in all.")
    var events: Int = 100_000

    @Option(help: "Events per batch.")
    var batch: Int = 100

    @Option(help: "Share of batches sent twice, to exercise deduplication (0…1).")
    var resend: Double = 0.01

    @Option(help: "Seed for the event mix.")
    var seed: UInt64 = 1

    @Flag(
        help:
            "Send time-ordered (v7) message ids, as the Touchpoint SDK does, instead of random (v4) ones as Segment's libraries send."
    )
    var v7Ids = false

    @Option(
        help:
            "Load this many events of past traffic quickly, for benchmarks: 100 events a user over --history-days, batches of 500, no resends (other options still apply)."
    )
    var fill: Int?

    @Option(help: "Send past traffic of this many users instead (sessions, sign-ins, a funnel; random ids).")
    var historyUsers: Int?

    @Option(help: "With --history-users: the days of past traffic, ending now.")
    var historyDays: Int = 90

    @Flag(help: "Exit with status 1 when any event was lost or stored twice.")
    var strict = false

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let url = URL(string: collector), let host = url.host, url.scheme == "http" else {
            throw ValidationError("--collector: expected http://host:port, got \(collector)")
        }
        guard let writeKey = writeKey ?? environment["TOUCHPOINT_WRITE_KEY"] else {
            throw ValidationError("--write-key (or TOUCHPOINT_WRITE_KEY) is required; `touchpoint serve` prints it")
        }
        var configuration = LoadGenConfiguration(
            host: host, port: url.port ?? 80, writeKey: writeKey,
            adminToken: adminToken ?? environment["TOUCHPOINT_ADMIN_TOKEN"], clients: clients, events: events,
            batchSize: batch, resendRate: resend, seed: seed, randomIds: !v7Ids)
        if let fill {
            guard fill > 0, (1...3650).contains(historyDays) else {
                throw ValidationError(
                    "--fill must be positive and --history-days 1 to 3650, got \(fill) and \(historyDays)")
            }
            configuration.events = fill
            configuration.batchSize = 500
            configuration.resendRate = 0
            configuration.historyUsers = historyUsers ?? max(1, fill / 100)
            configuration.historyDays = historyDays
        }
        if let historyUsers {
            guard historyUsers > 0, (1...3650).contains(historyDays) else {
                throw ValidationError("--history-users must be positive and --history-days 1 to 3650")
            }
            configuration.historyUsers = historyUsers
            configuration.historyDays = historyDays
        }
        print(
            "sending \(configuration.events) events in batches of \(configuration.batchSize) from \(clients) clients to \(collector) …"
        )
        let report = try await LoadGenerator(configuration: configuration).run()
        print(report.summary)
        if strict && (report.lost > 0 || report.duplicatesStored > 0 || report.failures > 0) {
            throw ExitCode(1)
        }
    }
}
