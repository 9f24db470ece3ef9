import Foundation
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// The insights that read events come from ClickHouse when it holds them; the brute-force suites
/// (`AnalyticsBruteForceTests`, `InsightsBruteForceTests`, `TrendInsightBruteForceTests`) check
/// their answers on the `clickhouse` store against the messages, and these check that it is
/// ClickHouse that answers, and what stays with PostgreSQL.
@Suite(
    "Insights from ClickHouse",
    .enabled(
        if: ClickHouseTestEnvironment.enabled && PostgresTestEnvironment.enabled,
        "needs TOUCHPOINT_TEST_CLICKHOUSE_URL and TOUCHPOINT_TEST_POSTGRES_URL"))
struct ClickHouseInsightsTests {
    /// Two days of `buy` by two people, one of them anonymous and then signed in.
    static let messages: [IngestMessage] = [
        TestMessages.ingest("buy", id: "b1", anonymous: "anon-1", at: 3600, properties: ["plan": "pro"]),
        AnalyticsTests.call(.identify, id: "i1", user: "user-1", anonymous: "anon-1", at: 7200),
        TestMessages.ingest(
            "buy", id: "b2", user: "user-1", anonymous: nil, at: 86_400 + 3600, properties: ["plan": "pro"]),
        TestMessages.ingest(
            "buy", id: "b3", user: "user-2", anonymous: nil, at: 86_400 + 7200, properties: ["plan": "free"]),
    ]

    static func trend(filters: [PropertyFilter] = []) throws -> TrendQuery {
        let parameters = AnalyticsParameters(now: TestMessages.base.addingTimeInterval(3 * 86_400), calendar: .utc) {
            ["event": "buy", "interval": "day", "from": "2026-01-01T00:00:00Z", "to": "2026-01-03T00:00:00Z"][$0]
        }
        var trend = try parameters.trend()
        trend.filters = filters
        return trend
    }

    /// Rows only ClickHouse holds count in the trends and funnels (so ClickHouse answered them),
    /// while a cohort's or a trait's query is answered from PostgreSQL's events.
    @Test func eventInsightsReadClickHouseAndTraitQueriesPostgreSQL() async throws {
        try await withStorage(.clickhouse) { storage async throws in
            let clickHouse = try #require(storage.clickHouse)
            #expect(try await storage.insert(Self.messages, source: "default").allSatisfy { $0 })
            // A purchase only ClickHouse has.
            try await clickHouse.insert(
                [
                    TestMessages.ingest(
                        "buy", id: "only-ch", user: "user-3", anonymous: nil, at: 86_400 + 60,
                        properties: ["plan": "pro"])
                ],
                source: "default")

            let query = CollectorQuery(storage: storage)
            let trend = try Self.trend()
            let answer = try await query.trend(source: "default", trend)
            #expect(answer.totals.map(\.count) == [1, 3])
            // anon-1 counts as user-1 on the first day: its merge came from PostgreSQL.
            #expect(
                try await storage.insights.trendTotals(source: "default", query: trend).mapValues(\.users).values
                    .sorted() == [
                        1, 3,
                    ])

            var breakdown = trend
            breakdown.breakdown = "plan"
            let series = try await query.trend(source: "default", breakdown).series
            #expect(series.first { $0.value == "pro" }?.points.map(\.count) == [1, 2])

            // A trait filter reads people's traits, which PostgreSQL keeps: its events, not ClickHouse's.
            let traitFilter = try PropertyFilter.parse("person.plan=x")
            #expect(!ClickHouseInsights.answers(filters: [traitFilter], people: nil))
            #expect(ClickHouseInsights.answers(filters: try Self.trend(filters: []).filters, people: nil))
            #expect(!ClickHouseInsights.answers(filters: [], people: [1]))
        }
    }

    /// Paths read ClickHouse too, both ways: a view only ClickHouse holds lies on user-1's way
    /// between two purchases (the first made as anon-1, merged in PostgreSQL), which PostgreSQL
    /// alone would count as one run of purchases.
    @Test(arguments: [["start": "buy", "window": "2d"], ["end": "buy", "from": "2026-01-02T00:00:00Z"]])
    func pathsReadClickHouseAfterAndBefore(values: [String: String]) async throws {
        try await withStorage(.clickhouse) { storage async throws in
            let clickHouse = try #require(storage.clickHouse)
            let view = TestMessages.ingest("view", id: "v2", user: "user-2", anonymous: nil, at: 86_400 + 9000)
            #expect(try await storage.insert(Self.messages + [view], source: "default").allSatisfy { $0 })
            try await clickHouse.insert(
                [TestMessages.ingest("view", id: "only-ch", user: "user-1", anonymous: nil, at: 86_400 + 1800)],
                source: "default")
            let defaults = ["from": "2026-01-01T00:00:00Z", "to": "2026-01-03T00:00:00Z"]
            let parameters = AnalyticsParameters(now: TestMessages.base.addingTimeInterval(3 * 86_400), calendar: .utc)
            {
                values[$0] ?? defaults[$0]
            }
            let paths = try await storage.insights.paths(
                source: "default", query: try parameters.paths(), names: try await storage.eventNames(source: "default")
            )
            let expected: Set<PathCount> =
                values["start"] != nil
                ? [PathCount(events: ["view", "buy"], people: 1), PathCount(events: ["view"], people: 1)]
                : [PathCount(events: ["view", "buy"], people: 1), PathCount(events: [], people: 1)]
            #expect(Set(paths) == expected)
        }
    }

    /// A funnel's events arrive as binary rows: breakdown values with the characters text formats
    /// escape (tab, newline, backslash, ClickHouse's `\\N` for null) come back as they were sent,
    /// on the first step's events only (the funnel reads no other's).
    @Test func funnelBreakdownValuesKeepTheCharactersTextFieldsEscape() async throws {
        let values = ["a\tb", "line\nbreak", #"back\slash"#, #"\N"#, "ünï", ""]
        var messages: [IngestMessage] = []
        for (index, value) in values.enumerated() {
            messages.append(
                TestMessages.ingest(
                    "view", id: "v\(index)", user: "u\(index)", anonymous: nil, at: 3600 + Double(index),
                    properties: ["plan": .string(value)]))
            messages.append(
                TestMessages.ingest("buy", id: "b\(index)", user: "u\(index)", anonymous: nil, at: 7200 + Double(index))
            )
        }
        let parameters = AnalyticsParameters(now: TestMessages.base.addingTimeInterval(3 * 86_400), calendar: .utc) {
            [
                "steps": "view,buy", "breakdown": "plan", "from": "2026-01-01T00:00:00Z", "to": "2026-01-03T00:00:00Z",
            ][$0]
        }
        let query = try parameters.funnel()
        try await withStorage(.clickhouse) { storage async throws in
            let clickHouse = try #require(storage.clickHouse)
            #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
            let rows = try await ClickHouseInsights(client: clickHouse.client, source: "default", merges: [])
                .funnelRows(query)
            #expect(rows.count == 2 * values.count)
            #expect(Set(rows.compactMap(\.value)) == Set(values))
            #expect(rows.filter { $0.steps == 1 }.allSatisfy { $0.value != nil })
            #expect(rows.filter { $0.steps == 2 }.allSatisfy { $0.value == nil })
            #expect(Set(rows.map(\.person)).count == values.count)
        }
    }

    /// ClickHouse 18.16 reads no request target over 16 KiB, and a query with the merges sent
    /// along travels in the URL: a longer one is answered by PostgreSQL, the same answer.
    @Test func aQueryTooLongForClickHousesURLIsAnsweredByPostgreSQL() async throws {
        try await withStorage(.clickhouse) { storage async throws in
            let clickHouse = try #require(storage.clickHouse)
            #expect(try await storage.insert(Self.messages, source: "default").allSatisfy { $0 })
            let long = String(repeating: "x", count: 20_000)
            let insights = ClickHouseInsights(client: clickHouse.client, source: "default", merges: [])
            let trend = try Self.trend(filters: [PropertyFilter(property: "plan", op: .notEquals, value: long)])
            await #expect(throws: ClickHouseClient.URITooLong.self) { _ = try await insights.trendTotals(trend) }
            let totals = try await storage.insights.trendTotals(source: "default", query: trend)
            #expect(totals.values.map(\.count).sorted() == [1, 2])
        }
    }

    /// A merge made after the events counts them as the user's at once, and a deletion takes the
    /// events out of ClickHouse's answers.
    @Test func mergesAndDeletionsCountAtOnce() async throws {
        try await withStorage(.clickhouse) { storage async throws in
            let before = [
                TestMessages.ingest("buy", id: "x1", anonymous: "anon-9", at: 3600),
                TestMessages.ingest("buy", id: "x2", user: "user-9", anonymous: nil, at: 7200),
            ]
            #expect(try await storage.insert(before, source: "default").allSatisfy { $0 })
            let trend = try Self.trend()
            #expect(
                try await storage.insights.trendTotals(source: "default", query: trend)[
                    trend.range.intervals(.day).lowerBound]?
                    .users == 2)
            let identify = AnalyticsTests.call(.identify, id: "i9", user: "user-9", anonymous: "anon-9", at: 9000)
            #expect(try await storage.insert([identify], source: "default").allSatisfy { $0 })
            let first = trend.range.intervals(.day).lowerBound
            #expect(try await storage.insights.trendTotals(source: "default", query: trend)[first]?.users == 1)

            let deletion = StoredDeletion(
                id: "del_ch", source: "default", body: "{}", suppressing: false,
                requestedAt: Timestamp.milliseconds(TestMessages.base))
            _ = try await storage.deleteUserData(deletion, userIds: ["user-9"], anonymousIds: ["anon-9"], suppress: [])
            #expect(try await storage.insights.trendTotals(source: "default", query: trend)[first] == nil)
        }
    }

    /// A message id sent again with another event name and day is one row in ClickHouse, as
    /// PostgreSQL keeps it (its first copy), not a second row under another sorting key.
    @Test func anIdSentAgainAsAnotherEventIsTheFirstCopyInClickHouse() async throws {
        try await withStorage(.clickhouse) { storage async throws in
            let clickHouse = try #require(storage.clickHouse)
            let first = TestMessages.ingest("buy", id: "same-id", at: 3600, properties: ["plan": "pro"])
            let again = TestMessages.ingest("view", id: "same-id", at: 2 * 86_400, properties: ["plan": "free"])
            #expect(try await storage.insert([first], source: "default") == [true])
            #expect(try await storage.insert([again], source: "default") == [false])
            #expect(try await storage.insert([again, first], source: "default") == [false, false])
            let rows = try await clickHouse.client.rows(
                ClickHouseEvents.select(
                    "event, toUnixTimestamp(time) AS seconds, property_texts[indexOf(property_keys, 'plan')] AS plan",
                    source: "default", where: []))
            #expect(rows.count == 1)
            #expect(rows.first?["event"] == .string("buy"))
            #expect(
                rows.first?["seconds"]?.intValue.map(Int64.init) == Timestamp.milliseconds(TestMessages.base) / 1000
                    + 3600)
            #expect(rows.first?["plan"] == .string("pro"))
        }
    }

    /// A day's insight reads that day's part of the table, not its month's: five days of 40,000
    /// events each, and a read limited to fewer rows than two of the days hold (both branches of
    /// ``ClickHouseEvents/select(_:source:where:)`` read the day).
    @Test func aDaysInsightReadsItsDayNotItsMonth() async throws {
        try await ClickHouseTestEnvironment.withDatabaseURL { url in
            let client = ClickHouseClient(
                url: url, readSettings: [("max_rows_to_read", "150000")], logger: PostgresTestEnvironment.logger)
            do {
                var events = ClickHouseEvents(client: client)
                try await events.prepare()
                let start = Timestamp.milliseconds(TestMessages.base) / 1000
                try await client.execute(
                    """
                    INSERT INTO events (source, event, type, message_id, time, user_id, version) \
                    SELECT 'default', 'buy', 'track', toString(number), \
                    toDateTime(\(start) + intDiv(number, 40000) * 86400 + number % 40000), \
                    concat('user-', toString(number % 100)), 1 FROM system.numbers LIMIT 200000
                    """)
                let parameters = AnalyticsParameters(
                    now: TestMessages.base.addingTimeInterval(10 * 86_400), calendar: .utc
                ) {
                    ["event": "buy", "interval": "day", "from": "2026-01-03T00:00:00Z", "to": "2026-01-04T00:00:00Z"][
                        $0]
                }
                let insights = ClickHouseInsights(client: client, source: "default", merges: [])
                let totals = try await insights.trendTotals(try parameters.trend(), people: true)
                #expect(totals.values.map(\.count) == [40_000])
                #expect(totals.values.map(\.users) == [100])
            } catch {
                await client.close()
                throw error
            }
            await client.close()
        }
    }

    /// A read that counts no one — a trend's counts beside the daily people, a breakdown's top
    /// values — joins no merges in ClickHouse: under a join limit of one row, which the two merges
    /// here exceed, those reads answer while a read of people fails on it.
    @Test func countsAndTopValuesJoinNoMerges() async throws {
        try await TestDatabase.with(.clickhouse) { database in
            let url = try #require(database.events)
            let client = ClickHouseClient(
                url: url, readSettings: [("max_rows_in_join", "1"), ("join_overflow_mode", "throw")],
                logger: PostgresTestEnvironment.logger)
            let storage = try await SQLCollectorStorage.postgres(
                url: database.location, maximumConnections: 4, clickHouse: ClickHouseEvents(client: client),
                logger: PostgresTestEnvironment.logger)
            do {
                let messages =
                    Self.messages + [
                        TestMessages.ingest("buy", id: "b4", anonymous: "anon-2", at: 86_400 + 9000),
                        AnalyticsTests.call(
                            .identify, id: "i2", user: "user-2", anonymous: "anon-2", at: 86_400 + 9600),
                    ]
                #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
                let trend = try Self.trend()
                let counts = try await storage.insights.trendCounts(source: "default", query: trend)
                #expect(counts.values.map(\.count).sorted() == [1, 3])
                #expect(
                    try await storage.insights.trendTopValues(
                        source: "default", query: trend, property: "plan", limit: 5) == [
                            "pro", "free",
                        ])
                await #expect(throws: StorageError.self) {
                    _ = try await storage.insights.trendTotals(source: "default", query: trend)
                }
                try await storage.close()
            } catch {
                try? await storage.close()
                throw error
            }
        }
    }

    /// A trend's counts take every row in one read and a resent message's extra copies off after
    /// (read through the sorting key): each message counts once — one sent three times, one
    /// twice, one that shares its millisecond with a resent message, a resent one of another
    /// name — by interval, by value and in people.
    @Test func aTrendCountsEachResentMessageOnce() async throws {
        try await ClickHouseTestEnvironment.withDatabase { client in
            var events = ClickHouseEvents(client: client)
            try await events.prepare()
            let plans = ["pro", "free", "pro", "team", "free", "pro"]
            let batch =
                plans.enumerated().map { index, plan in
                    TestMessages.ingest(
                        "buy", id: "m-\(index)", user: "u-\(index % 4)", anonymous: nil,
                        at: Double(index) * 40_000, properties: ["plan": .string(plan)])
                } + [TestMessages.ingest("view", id: "v-0", user: "u-9", anonymous: nil, at: 0)]
            try await events.insert(batch, source: "app")
            // Retries: every message again, the first two a third time; then a message that is no
            // copy at the very millisecond of a resent one (it is read as such a time's rows are).
            let retry = ClickHouseEventsTests.retried(batch)
            let resent = Set(batch.map(\.messageId))
            try await events.insert(retry, resent: resent, source: "app")
            try await events.insert(Array(retry.prefix(2)), resent: resent, source: "app")
            try await events.insert(
                [
                    TestMessages.ingest(
                        "buy", id: "same-ms", user: "u-5", anonymous: nil, at: 0, properties: ["plan": "pro"])
                ], source: "app")

            let parameters = AnalyticsParameters(now: TestMessages.base.addingTimeInterval(5 * 86_400), calendar: .utc)
            {
                ["event": "buy", "interval": "day", "from": "2026-01-01T00:00:00Z", "to": "2026-01-04T00:00:00Z"][$0]
            }
            let trend = try parameters.trend()
            let insights = ClickHouseInsights(client: client, source: "app", merges: [])
            // 40,000 s apart: day 0 has m-0, m-1, m-2 and same-ms; day 1 m-3 and m-4; day 2 m-5.
            let totals = try await insights.trendTotals(trend, people: true)
            #expect(totals.keys.sorted().map { totals[$0]?.count } == [4, 2, 1])
            #expect(totals.keys.sorted().map { totals[$0]?.users } == [4, 2, 1])
            let counts = try await insights.trendTotals(trend, people: false)
            #expect(counts.keys.sorted().map { counts[$0]?.count } == [4, 2, 1])
            let byValue = try #require(try await insights.trendByValue(trend, property: "plan", limit: 100))
            var found: [String: Int] = [:]
            for row in byValue { found["\(row.index) \(row.value ?? "-")", default: 0] += row.count }
            let first = try #require(totals.keys.min())
            #expect(
                found == [
                    "\(first) pro": 3, "\(first) free": 1, "\(first + 1) team": 1, "\(first + 1) free": 1,
                    "\(first + 2) pro": 1,
                ])
            let aggregate = try await insights.trendAggregate(trend)
            #expect(aggregate.count == 7)
            #expect(aggregate.users == 5)
        }
    }

    /// A table made before the insights read the property arrays and the person's hash gets them
    /// when a collector starts; its rows from before count their people as the new ones do. It
    /// stored the person as text and the properties as JSON, which ingest goes on filling until
    /// they are dropped; the person then comes back as an alias.
    @Test func anOlderTableGetsThePropertyAndPersonColumns() async throws {
        try await ClickHouseTestEnvironment.withDatabase { client in
            try await client.execute(ClickHouseSchemaTests.firstReleaseEvents)
            // Written before the columns: anon-1 (merged into user-1 below), user-2, a message
            // without ids, which counts as an event but as no one, and a user whose id reads like
            // the merged anonymous id (a merge names anonymous ids only: not merged).
            let before = [
                TestMessages.ingest("buy", id: "o1", anonymous: "anon-1", at: 60),
                TestMessages.ingest("buy", id: "o2", user: "user-2", anonymous: nil, at: 120),
                TestMessages.ingest("buy", id: "o3", anonymous: nil, at: 180),
                TestMessages.ingest("buy", id: "o4", user: "anon-1", anonymous: nil, at: 200),
            ]
            try await client.insert(
                into: ClickHouseEvents.table,
                rows: before.map { message in
                    [
                        "source": .string("app"), "event": .string("buy"), "type": .string("track"),
                        "message_id": .string(message.messageId), "time": .int(Int(message.timestamp / 1000)),
                        "time_ms": .int(Int(message.timestamp % 1000)), "user_id": .string(message.userId ?? ""),
                        "anonymous_id": .string(message.anonymousId ?? ""),
                        "person": .string(message.userId ?? message.anonymousId ?? ""),
                        "received_at": .int(Int(message.receivedAt / 1000)), "payload": .string(message.payload),
                        "properties": .string("{}"), "version": .int(1),
                    ]
                })
            var events = ClickHouseEvents(client: client)
            try await events.prepare()
            try await events.prepare()
            let columns = try await client.rows(
                "SELECT name FROM system.columns WHERE database = currentDatabase() AND table = 'events'"
            ).compactMap { $0["name"]?.stringValue }
            for name in [
                "property_keys", "property_texts", "property_numbers", "property_numeric", "person_hash", "anonymous",
            ] {
                #expect(columns.contains(name))
            }
            try await events.insert(
                [
                    TestMessages.ingest("buy", id: "n1", user: "user-1", anonymous: nil, at: 240, properties: ["n": 2]),
                    TestMessages.ingest("buy", id: "n2", anonymous: "anon-3", at: 300),
                ], source: "app")
            let rows = try await client.rows(
                "SELECT property_keys, property_numbers FROM events WHERE message_id = 'n1'")
            #expect(rows.first?["property_keys"] == .array([.string("n")]))
            #expect(rows.first?["property_numbers"] == .array([.int(2)]))
            #expect(events.storedLegacyColumns == [.person, .properties])
            let legacy = try await client.rows(
                "SELECT message_id, person, properties FROM events WHERE message_id IN ('n1', 'n2') ORDER BY message_id"
            )
            #expect(legacy.map { $0["person"] } == [.string("user-1"), .string("anon-3")])
            #expect(legacy.map { $0["properties"] } == [.string(#"{"n":2}"#), .string("{}")])
            // One day: user-1 (anon-1's anonymous event too), the user anon-1, user-2 and anon-3;
            // the message without ids is an event of no one. Unmerged, anon-1's two events are
            // one person, and user-1 another.
            let insights = ClickHouseInsights(client: client, source: "app", merges: [("anon-1", "user-1")])
            let totals = try await insights.trendTotals(try Self.trend(filters: []), people: true)
            #expect(totals.values.map(\.count).reduce(0, +) == 6)
            #expect(totals.values.map(\.users) == [4])
            let unmerged = ClickHouseInsights(client: client, source: "app", merges: [])
            #expect(
                try await unmerged.trendTotals(try Self.trend(filters: []), people: true).values.map(\.users) == [4])
            let funnelQuery = try AnalyticsParameters(
                now: TestMessages.base.addingTimeInterval(3 * 86_400), calendar: .utc
            ) {
                ["steps": "buy,buy", "window": "1d", "from": "2026-01-01T00:00:00Z", "to": "2026-01-03T00:00:00Z"][$0]
            }.funnel()
            // The funnel's rows name people by the same numbers: anon-1's event from before the
            // columns is user-1's, and not once its merge is gone.
            func people(_ insights: ClickHouseInsights) async throws -> [Int64: Set<Int64>] {
                var people: [Int64: Set<Int64>] = [:]
                for row in try await insights.funnelRows(funnelQuery) {
                    people[row.person, default: []].insert(row.timestamp)
                }
                return people
            }
            let time = { (seconds: TimeInterval) in
                Timestamp.milliseconds(TestMessages.base.addingTimeInterval(seconds))
            }
            let merged = try await people(insights)
            #expect(merged.count == 4)
            #expect(merged.values.contains([time(60), time(240)]))
            let apart = try await people(unmerged)
            #expect(apart.count == 4)
            #expect(apart.values.contains([time(60), time(200)]))
            #expect(apart.values.contains([time(240)]))

            // Their space freed as the README says: the next start makes `person` the alias, and
            // ingest sends neither; every row, from before or after, reads its person the same.
            try await client.execute("ALTER TABLE events DROP COLUMN properties, DROP COLUMN person")
            try await events.prepare()
            #expect(events.storedLegacyColumns.isEmpty)
            try await events.insert(
                [TestMessages.ingest("buy", id: "n3", user: nil, anonymous: "anon-4", at: 360)], source: "app")
            let named = try await client.rows("SELECT message_id, person FROM events ORDER BY message_id")
            #expect(named.map { $0["message_id"] } == ["n1", "n2", "n3", "o1", "o2", "o3", "o4"].map(JSONValue.string))
            #expect(
                named.map { $0["person"] }
                    == ["user-1", "anon-3", "anon-4", "anon-1", "user-2", "", "anon-1"].map(JSONValue.string))
            #expect(
                try await insights.trendTotals(try Self.trend(filters: []), people: true).values.map(\.users) == [5])
        }
    }
}
