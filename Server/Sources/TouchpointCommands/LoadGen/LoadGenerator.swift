import Dispatch
import Foundation
import TouchpointCore

/// What `touchpoint loadgen` sends: how many clients, events and batches, to which collector.
public struct LoadGenConfiguration: Sendable {
    /// The collector's address, e.g. `127.0.0.1`.
    public var host: String
    /// The collector's port.
    public var port: Int
    /// The write key to send with (HTTP Basic).
    public var writeKey: String
    /// The admin token, to count stored events before and after (loss and duplicate check); nil skips the check.
    public var adminToken: String?
    /// Concurrent clients, each on its own thread with one keep-alive connection.
    public var clients: Int
    /// Unique events to send in all.
    public var events: Int
    /// Events per batch.
    public var batchSize: Int
    /// The share of batches sent a second time (a retry after a lost response), to exercise deduplication.
    public var resendRate: Double
    /// Seed for the event mix, so runs are reproducible.
    public var seed: UInt64
    /// Random (v4) message ids, as Segment's libraries send; otherwise time-ordered (v7) ids, as
    /// the Touchpoint SDK sends.
    public var randomIds: Bool
    /// Past traffic instead of live traffic: this many users over ``historyDays`` days before
    /// now, with sessions, sign-ins and a product → cart → checkout funnel (``HistoryBatches``;
    /// always random ids). Nil sends live traffic.
    public var historyUsers: Int?
    /// The days of past traffic (with ``historyUsers``).
    public var historyDays = 90

    /// Creates a configuration.
    public init(
        host: String, port: Int, writeKey: String, adminToken: String? = nil, clients: Int = 8, events: Int = 100_000,
        batchSize: Int = 100, resendRate: Double = 0.01, seed: UInt64 = 1, randomIds: Bool = true
    ) {
        self.host = host
        self.port = port
        self.writeKey = writeKey
        self.adminToken = adminToken
        self.clients = max(1, clients)
        self.events = max(0, events)
        self.batchSize = max(1, batchSize)
        self.resendRate = min(max(resendRate, 0), 1)
        self.seed = seed
        self.randomIds = randomIds
    }
}

/// What a load run measured.
public struct LoadGenReport: Sendable {
    /// Unique events sent.
    public var eventsSent: Int
    /// Requests sent, resends included.
    public var requests: Int
    /// Events sent a second time (resent batches).
    public var eventsResent: Int
    /// Wall-clock seconds from the first request to the last response.
    public var seconds: Double
    /// Request latencies in milliseconds, sorted.
    public var latencies: [Double]
    /// Sum of `accepted` over all responses.
    public var accepted: Int
    /// Sum of `duplicates` over all responses.
    public var duplicatesReported: Int
    /// Sum of rejected events over all responses.
    public var rejected: Int
    /// Requests that did not get a 200 (their first few reasons are in ``failureMessages``).
    public var failures: Int
    /// The first few failure messages.
    public var failureMessages: [String]
    /// Events the collector counted for the source before and after the run (nil without an admin token).
    public var storedBefore: Int?
    /// See ``storedBefore``.
    public var storedAfter: Int?

    /// Unique events per second.
    public var eventsPerSecond: Double { seconds > 0 ? Double(eventsSent) / seconds : 0 }

    /// The latency at quantile `q` (0…1) in milliseconds.
    public func latency(quantile q: Double) -> Double {
        guard !latencies.isEmpty else { return 0 }
        let rank = Int((q * Double(latencies.count - 1)).rounded())
        return latencies[min(max(rank, 0), latencies.count - 1)]
    }

    /// Events stored by the run, by the collector's own count; nil without an admin token.
    public var stored: Int? {
        guard let storedBefore, let storedAfter else { return nil }
        return storedAfter - storedBefore
    }

    /// Events sent but not stored (by the count when known, else by the responses).
    public var lost: Int { max(0, eventsSent - (stored ?? accepted)) }

    /// Events stored more than once (by the count when known, else by the responses).
    public var duplicatesStored: Int { max(0, (stored ?? accepted) - eventsSent) }

    /// A human-readable summary.
    public var summary: String {
        func format(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }
        var lines = [
            "events sent:       \(eventsSent) unique (+\(eventsResent) resent) in \(requests) requests",
            "elapsed:           \(format(seconds, 2)) s",
            "throughput:        \(format(eventsPerSecond, 0)) events/s",
            "latency (ms):      p50 \(format(latency(quantile: 0.5), 2))  p90 \(format(latency(quantile: 0.9), 2))  p99 \(format(latency(quantile: 0.99), 2))  max \(format(latencies.last ?? 0, 2))",
            "responses:         accepted \(accepted), duplicates \(duplicatesReported), rejected \(rejected), failed requests \(failures)",
        ]
        if let stored {
            lines.append("stored (counted):  \(stored) → lost \(lost), duplicates stored \(duplicatesStored)")
        } else {
            lines.append(
                "stored (reported): \(accepted) → lost \(lost), duplicates stored \(duplicatesStored) (pass --admin-token to count)"
            )
        }
        lines += failureMessages.map { "failure: \($0)" }
        return lines.joined(separator: "\n")
    }
}

/// Sends realistic batches from N concurrent clients and measures throughput and latency.
///
/// Each client is a thread with one keep-alive connection, so the generator costs little next to
/// the server it measures.
public struct LoadGenerator: Sendable {
    /// What to send.
    public var configuration: LoadGenConfiguration

    /// Creates a generator.
    public init(configuration: LoadGenConfiguration) {
        self.configuration = configuration
    }

    /// Runs the load and, with an admin token, counts what the collector stored.
    /// - Throws: ``HTTPConnection/Failure`` when the collector cannot be reached for the count.
    public func run() async throws -> LoadGenReport {
        let before = try await countStored()
        let perClient = Self.split(configuration.events, into: configuration.clients)
        let results = Locked<[ClientResult]>([])
        let start = ContinuousClock.now
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let group = DispatchGroup()
            for (index, events) in perClient.enumerated() {
                group.enter()
                let configuration = self.configuration
                let thread = Thread {
                    let result = Self.runClient(index: index, events: events, configuration: configuration)
                    results.withLock { $0.append(result) }
                    group.leave()
                }
                thread.stackSize = 1 << 20
                thread.start()
            }
            group.notify(queue: .global()) { continuation.resume() }
        }
        let seconds = (ContinuousClock.now - start).seconds
        let after = try await countStored()
        let all = results.value
        let failures = all.flatMap(\.failureMessages)
        return LoadGenReport(
            eventsSent: all.reduce(0) { $0 + $1.eventsSent }, requests: all.reduce(0) { $0 + $1.requests },
            eventsResent: all.reduce(0) { $0 + $1.eventsResent }, seconds: seconds,
            latencies: all.flatMap(\.latencies).sorted(), accepted: all.reduce(0) { $0 + $1.accepted },
            duplicatesReported: all.reduce(0) { $0 + $1.duplicates }, rejected: all.reduce(0) { $0 + $1.rejected },
            failures: all.reduce(0) { $0 + $1.failures }, failureMessages: Array(failures.prefix(5)),
            storedBefore: before, storedAfter: after)
    }

    static func split(_ total: Int, into parts: Int) -> [Int] {
        (0..<parts).map { total / parts + ($0 < total % parts ? 1 : 0) }
    }

    private struct ClientResult: Sendable {
        var eventsSent = 0
        var eventsResent = 0
        var requests = 0
        var latencies: [Double] = []
        var accepted = 0
        var duplicates = 0
        var rejected = 0
        var failures = 0
        var failureMessages: [String] = []
    }

    private static func runClient(index: Int, events: Int, configuration: LoadGenConfiguration) -> ClientResult {
        var result = ClientResult()
        let connection = HTTPConnection(host: configuration.host, port: configuration.port)
        let headers = [
            ("Authorization", TransportHeaders.basicAuthorization(user: configuration.writeKey)),
            ("Content-Type", "application/json"),
        ]
        var batches = SyntheticBatches(
            seed: configuration.seed &* 1000 &+ UInt64(index), randomIds: configuration.randomIds)
        // Each client its own share of the users.
        var history = configuration.historyUsers.map { users in
            HistoryBatches(
                seed: configuration.seed, client: index, users: max(1, users / configuration.clients),
                days: configuration.historyDays, events: events)
        }
        var random = SeededRandomNumberGenerator(seed: configuration.seed &+ UInt64(index) &* 7919)
        var remaining = events
        while remaining > 0 {
            let count = min(configuration.batchSize, remaining)
            let body = history?.batch(count: count) ?? batches.batch(count: count, at: Date())
            remaining -= count
            result.eventsSent += count
            let resend = Double(random.next() % 1_000_000) / 1_000_000 < configuration.resendRate
            for attempt in 0..<(resend ? 2 : 1) {
                if attempt == 1 { result.eventsResent += count }
                let start = ContinuousClock.now
                result.requests += 1
                do {
                    let response = try connection.send(method: "POST", path: "/v1/batch", headers: headers, body: body)
                    result.latencies.append((ContinuousClock.now - start).seconds * 1000)
                    guard response.status == 200, let json = try? JSONParser.parse(response.body) else {
                        result.failures += 1
                        result.failureMessages.append(
                            "HTTP \(response.status): \(TransportResponse.excerpt(of: response.body))")
                        continue
                    }
                    result.accepted += json["accepted"]?.intValue ?? 0
                    result.duplicates += json["duplicates"]?.intValue ?? 0
                    result.rejected += json["rejected"]?.arrayValue?.count ?? 0
                } catch {
                    result.failures += 1
                    result.failureMessages.append("\(error)")
                }
            }
        }
        return result
    }

    /// The collector's event count for the write key's source, or nil without an admin token.
    private func countStored() async throws -> Int? {
        guard let token = configuration.adminToken else { return nil }
        let configuration = self.configuration
        let key = configuration.writeKey.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let response = try await Self.onThread {
            // A collector before schema 13 counts by reading every event's index entry (minutes
            // at 50 million events with a cold cache), far past the 30 s a batch may take.
            try HTTPConnection(host: configuration.host, port: configuration.port, timeoutSeconds: 600).send(
                method: "GET", path: "/v1/query/counts?writeKey=\(key)", headers: [("Authorization", "Bearer \(token)")]
            )
        }
        guard response.status == 200, let count = (try? JSONParser.parse(response.body))?["events"]?.intValue else {
            throw HTTPConnection.Failure(message: "counting stored events: HTTP \(response.status): \(response.text)")
        }
        return count
    }

    /// Runs blocking work on a thread of its own, off Swift's cooperative pool.
    static func onThread<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Swift.Result { try work() }) }.start()
        }
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    fileprivate var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
