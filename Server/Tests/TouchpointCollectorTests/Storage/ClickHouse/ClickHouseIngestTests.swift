import Foundation
import Logging
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// `touchpoint serve --database postgres://… --events clickhouse://…`: a real collector on
/// 127.0.0.1 storing into real PostgreSQL and ClickHouse.
@Suite(
    "Ingest into PostgreSQL and ClickHouse",
    .enabled(
        if: ClickHouseTestEnvironment.enabled && PostgresTestEnvironment.enabled,
        "needs TOUCHPOINT_TEST_CLICKHOUSE_URL and TOUCHPOINT_TEST_POSTGRES_URL"))
struct ClickHouseIngestTests {
    /// Runs `body` against a collector over a fresh PostgreSQL database whose events go to
    /// `events` as well.
    static func withCollector(
        events: String, queryTimeLimit: Duration = .seconds(60), _ body: (RunningCollector) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory(prefix: "clickhouse-ingest")
        let database = try await PostgresTestEnvironment.createDatabase()
        var configuration = CollectorConfiguration(port: 0, dataDirectory: directory.url)
        configuration.logger.logLevel = .critical
        configuration.databaseURL = database.url
        configuration.eventsURL = events
        configuration.eventsQueryTimeLimit = queryTimeLimit
        do {
            try await CollectorServer(configuration: configuration).withRunning(body)
        } catch {
            await PostgresTestEnvironment.drop(database.name)
            throw error
        }
        await PostgresTestEnvironment.drop(database.name)
    }

    static func batch(_ ids: [String]) -> [UInt8] {
        TestMessages.batch(
            ids.enumerated().map { index, id in
                TestMessages.track("Opened", id: id, user: index % 3 == 0 ? "user-\(index)" : nil, at: Double(index))
            }, sentAt: TestMessages.base.addingTimeInterval(60))
    }

    @Test func aResentBatchIsStoredOnceInBoth() async throws {
        try await ClickHouseTestEnvironment.withDatabase { clickHouse in
            try await Self.withCollector(events: clickHouse.url.description) { collector in
                #expect(collector.storageDescription.contains("events in ClickHouse at \(clickHouse.url)"))
                let client = LiveClient(port: collector.port)
                let body = Self.batch((0..<40).map { "m-\($0)" })
                let first = try await client.postBatch(body, writeKey: collector.writeKey)
                #expect(first.status == 200)
                // The client did not see the answer and sends the batch again.
                let again = try await client.postBatch(body, writeKey: collector.writeKey)
                #expect(again.status == 200)
                #expect(try JSONParser.parse(again.body)["duplicates"]?.intValue == 40)

                #expect(try await ClickHouseEvents(client: clickHouse).count(source: "default") == 40)
                #expect(try await client.count(adminToken: collector.adminToken) == 40)
                // The second copies were named as resent before they were inserted.
                let resent = try await clickHouse.rows(
                    "SELECT uniqExact(message_id) AS n FROM \(identifier: ClickHouseEvents.resentTable) WHERE source = 'default'"
                )
                #expect(resent.first?["n"] == .int(40))
                let people = try await clickHouse.rows(
                    "SELECT uniqExact(person) AS people FROM (\(ClickHouseEvents.select("person", source: "default", where: ["event = 'Opened'"])))"
                )
                #expect(people.first?["people"] == .int(14 + 1))  // 14 users and anon-1
                #expect(try await client.send(method: "GET", path: "/health/ready").status == 200)
            }
        }
    }

    /// An insight ClickHouse does not answer within the query time limit is a `422` naming the
    /// cure, without `Retry-After`: asked again, the same query would take as long.
    @Test func anInsightPastItsTimeLimitIsRefusedNotRetried() async throws {
        try await ClickHouseTestEnvironment.withDatabase { clickHouse in
            let proxy = try FaultInjectingServer(plan: .none, upstream: URL(string: clickHouse.url.endpoint)!)
            defer { proxy.stop() }
            let through = "http://127.0.0.1:\(proxy.server.port)/\(clickHouse.url.database)"
            try await Self.withCollector(events: through, queryTimeLimit: .seconds(2)) { collector in
                let client = LiveClient(port: collector.port)
                #expect(try await client.postBatch(Self.batch(["a", "b"]), writeKey: collector.writeKey).status == 200)
                let trend =
                    "/v1/query/trends?event=Opened&interval=day&from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z"
                let admin = [("Authorization", "Bearer \(collector.adminToken)")]
                #expect(try await client.send(method: "GET", path: trend, headers: admin).status == 200)

                proxy.setPlan(FaultPlan(rates: [.stall(seconds: 10): 1]))
                let refused = try await client.send(method: "GET", path: trend, headers: admin)
                #expect(refused.status == 422)
                #expect(refused.headers["retry-after"] == nil)
                let body = try JSONParser.parse(refused.body)
                #expect(body["code"] == "query_too_slow")
                #expect(body["error"]?.stringValue?.contains("shorter range") == true)
                // The dashboard's page of the same trend says so in a problem box, not as JSON.
                let cookie = try await DashboardLiveTests.signIn(client, adminToken: collector.adminToken)
                let range = "from=2026-01-01T00%3A00&to=2026-01-02T00%3A00"
                let page = try await client.send(
                    method: "GET", path: "/dashboard/trends?event=Opened&interval=day&\(range)",
                    headers: [("Cookie", cookie)])
                #expect(page.status == 422)
                #expect(page.headers["content-type"]?.hasPrefix("text/html") == true)
                #expect(page.text.contains("<p class=\"problem\" role=\"alert\">The query ran past its time limit"))
                #expect(page.headers["retry-after"] == nil)

                proxy.setPlan(.none)
                #expect(try await client.send(method: "GET", path: trend, headers: admin).status == 200)
            }
        }
    }

    @Test func whenClickHouseIsDownIngestAnswers503AndTheRetryIsStoredOnce() async throws {
        try await ClickHouseTestEnvironment.withDatabase { clickHouse in
            // The collector reaches ClickHouse through a proxy that can cut every connection.
            let proxy = try FaultInjectingServer(plan: .none, upstream: URL(string: clickHouse.url.endpoint)!)
            defer { proxy.stop() }
            let through = "http://127.0.0.1:\(proxy.server.port)/\(clickHouse.url.database)"
            try await Self.withCollector(events: through) { collector in
                let client = LiveClient(port: collector.port)
                #expect(try await client.postBatch(Self.batch(["before"]), writeKey: collector.writeKey).status == 200)

                proxy.setPlan(FaultPlan(rates: [.reset: 1]))
                let body = Self.batch((0..<25).map { "down-\($0)" })
                let refused = try await client.postBatch(body, writeKey: collector.writeKey)
                #expect(refused.status == 503)
                #expect(refused.headers["retry-after"] == "1")
                #expect(try JSONParser.parse(refused.body)["code"] == "storage_unavailable")
                let ready = try await client.send(method: "GET", path: "/health/ready")
                #expect(ready.status == 503)
                #expect(ready.text.contains("ClickHouse, where the events are kept, does not answer"))

                // Back: the client's retry is acknowledged and every event is in ClickHouse once.
                proxy.setPlan(.none)
                let retried = try await client.postBatch(body, writeKey: collector.writeKey)
                #expect(retried.status == 200)
                #expect(try await ClickHouseEvents(client: clickHouse).count(source: "default") == 26)
                #expect(try await client.count(adminToken: collector.adminToken) == 26)
                #expect(try await client.send(method: "GET", path: "/health/ready").status == 200)
            }
        }
    }

    @Test func aUsersDeletionReachesClickHouse() async throws {
        try await ClickHouseTestEnvironment.withDatabase { clickHouse in
            try await Self.withCollector(events: clickHouse.url.description) { collector in
                let client = LiveClient(port: collector.port)
                let body = TestMessages.batch([
                    TestMessages.track("Opened", user: "leaving", anonymous: "anon-leaving"),
                    TestMessages.track("Opened", user: nil, anonymous: "anon-leaving"),
                    TestMessages.track("Opened", user: "staying", anonymous: "anon-staying"),
                ])
                #expect(try await client.postBatch(body, writeKey: collector.writeKey).status == 200)
                let deletion = try await client.send(
                    method: "POST", path: "/v1/admin/deletions",
                    headers: [
                        ("Authorization", "Bearer \(collector.adminToken)"), ("Content-Type", "application/json"),
                    ],
                    body: Array(#"{"userIds":["leaving"]}"#.utf8))
                #expect((200..<300).contains(deletion.status), "\(deletion.status) \(deletion.text)")
                let left = try await clickHouse.rows(
                    "SELECT user_id, anonymous_id FROM events ORDER BY user_id")
                #expect(left.map { $0["anonymous_id"] } == [.string("anon-staying")])
            }
        }
    }
}

@Suite("--events needs PostgreSQL")
struct ClickHouseConfigurationTests {
    @Test func eventsWithoutADatabaseIsRefusedSayingWhy() async throws {
        let directory = try TemporaryDirectory(prefix: "clickhouse-config")
        var configuration = CollectorConfiguration(port: 0, dataDirectory: directory.url)
        configuration.logger.logLevel = .critical
        configuration.eventsURL = "clickhouse://127.0.0.1:8123/events"
        await #expect {
            try await CollectorServer(configuration: configuration).withRunning { _ in }
        } throws: { error in
            "\(error)".contains("--events (TOUCHPOINT_EVENTS) needs --database postgres://")
        }
    }

    @Test func aBadEventsURLNamesTheOption() async throws {
        let directory = try TemporaryDirectory(prefix: "clickhouse-config")
        var configuration = CollectorConfiguration(port: 0, dataDirectory: directory.url)
        configuration.logger.logLevel = .critical
        configuration.databaseURL = "postgres://127.0.0.1:1/none"
        configuration.eventsURL = "mysql://127.0.0.1/events"
        await #expect {
            try await CollectorServer(configuration: configuration).withRunning { _ in }
        } throws: { error in
            "\(error)".contains("--events (TOUCHPOINT_EVENTS): mysql://127.0.0.1/events: expected clickhouse://")
        }
    }
}

@Suite(
    "Retention in ClickHouse",
    .enabled(
        if: ClickHouseTestEnvironment.enabled && PostgresTestEnvironment.enabled,
        "needs TOUCHPOINT_TEST_CLICKHOUSE_URL and TOUCHPOINT_TEST_POSTGRES_URL"))
struct ClickHouseRetentionTests {
    static let day: TimeInterval = 86_400

    /// `ClickHouseEvents.client` is closed with the storage: a second client on the same database
    /// reads what is left.
    @Test(arguments: [true, false])
    func aPassDropsTheMonthsOlderThanEverySourcesLimit(everySourceExpires: Bool) async throws {
        try await ClickHouseTestEnvironment.withDatabase { clickHouse in
            let database = try await PostgresTestEnvironment.createDatabase()
            let own = ClickHouseClient(url: clickHouse.url, logger: PostgresTestEnvironment.logger)
            let storage = try await SQLCollectorStorage.postgres(
                url: database.url, maximumConnections: 2, clickHouse: ClickHouseEvents(client: own),
                logger: PostgresTestEnvironment.logger)
            do {
                // January 2026 (days 0 and 20), February (40), March (65); now is 1 April (day 90).
                for source in ["default", "web"] {
                    let messages = [0.0, 20, 40, 65].map { days in
                        TestMessages.ingest("Opened", id: "\(source)-\(days)", at: days * Self.day)
                    }
                    #expect(try await storage.insert(messages, source: source).allSatisfy { $0 })
                }
                let clock = ManualClock(start: TestMessages.base.addingTimeInterval(90 * Self.day))
                let retention = RetentionService(
                    storage: storage,
                    sources: [
                        CollectorSource(id: "default", writeKey: "k1"),
                        CollectorSource(
                            id: "web", writeKey: "k2", retentionDays: 45),
                    ],
                    defaultDays: everySourceExpires ? 30 : nil, clock: clock, logger: Logger(label: "test"))
                if !everySourceExpires {
                    // "default" keeps everything, and a partition holds every source's month: none
                    // goes (PostgreSQL deletes "web"'s old days).
                    _ = try await retention.runPass()
                    #expect(try await ClickHouseEvents(client: clickHouse).count(source: "web") == 4)
                    #expect(try await ClickHouseEvents(client: clickHouse).count(source: "default") == 4)
                } else {
                    try await retention.runPass()
                    // The longest limit ("web", 45 days) begins on 15 February: January goes whole, for
                    // both sources; February stays (PostgreSQL deletes "default"'s by day).
                    let events = ClickHouseEvents(client: clickHouse)
                    #expect(try await events.count(source: "web") == 2)
                    #expect(try await events.count(source: "default") == 2)
                }
            } catch {
                try? await storage.close()
                await PostgresTestEnvironment.drop(database.name)
                throw error
            }
            try await storage.close()
            await PostgresTestEnvironment.drop(database.name)
        }
    }
}
