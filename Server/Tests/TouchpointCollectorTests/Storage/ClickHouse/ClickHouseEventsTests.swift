import Foundation
import Testing
import TouchpointCore

@testable import TouchpointCollector

@Suite("ClickHouse events", .enabled(if: ClickHouseTestEnvironment.enabled, "needs TOUCHPOINT_TEST_CLICKHOUSE_URL"))
struct ClickHouseEventsTests {
    /// 2026-01-01T00:00:00Z, as `TestMessages.base`.
    static let january: TimeInterval = 0
    static let day: TimeInterval = 86_400

    /// `batch` as a retry sends it: the same messages (as PostgreSQL keeps their first copies),
    /// received a minute later.
    static func retried(_ batch: [IngestMessage]) -> [IngestMessage] {
        batch.map { message in
            var copy = message
            copy.receivedAt += 60_000
            return copy
        }
    }

    @Test func aResentBatchIsStoredOnceAndTheFirstCopyWins() async throws {
        try await ClickHouseTestEnvironment.withDatabase { client in
            var events = ClickHouseEvents(client: client)
            try await events.prepare()
            try await events.prepare()  // idempotent: a second collector starting
            let batch = (0..<50).map { index in
                TestMessages.ingest(
                    "Opened", id: "m-\(index)", user: index % 2 == 0 ? "u-\(index)" : nil, at: Double(index))
            }
            try await events.insert(batch, source: "app")
            let retry = Self.retried(batch)
            let resent = Set(batch.map(\.messageId))
            try await events.insert(retry, resent: resent, source: "app")
            try await events.insert(Array(retry.prefix(10)), resent: resent, source: "app")
            #expect(try await events.count(source: "app") == 50)
            // Only the resent messages are deduplicated: one inserted twice without being named is
            // counted twice.
            try await events.insert([batch[0]], source: "other")
            try await events.insert([batch[0]], source: "other")
            #expect(try await events.count(source: "other") == 2)

            // Merged on disk, the first copy is the one left.
            try await client.execute("OPTIMIZE TABLE events FINAL")
            let rows = try await client.rows(
                """
                SELECT count() AS n, max(toUnixTimestamp(received_at)) AS received, countIf(user_id != '') AS users
                FROM events WHERE source = 'app'
                """)
            #expect(rows.first?["n"] == .int(50))
            #expect(
                rows.first?["received"]?.intValue.map(Int64.init) == batch.map(\.receivedAt).max().map { $0 / 1000 })
            #expect(rows.first?["users"] == .int(25))
        }
    }

    /// A table from before resent messages were named: the copies retries left there (here under
    /// another sorting key, which no merge folds) are named when a collector first starts, once.
    @Test func anOlderTablesCopiesAreNamedAsResentWhenACollectorStarts() async throws {
        try await ClickHouseTestEnvironment.withDatabase { client in
            // `events` as the releases before resent messages made it, with no version recorded.
            try await ClickHouseMigrations.migrate(client, upTo: 2)
            try await client.execute("DROP TABLE schema_migrations")
            var events = ClickHouseEvents(client: client)
            let batch = (0..<10).map { TestMessages.ingest("Opened", id: "old-\($0)", at: Double($0)) }
            try await events.insert(batch, source: "app")
            // An older collector's retries: four ids again, a few milliseconds later, one as another event.
            let retries = (0..<4).map { index in
                TestMessages.ingest(index == 0 ? "Closed" : "Opened", id: "old-\(index)", at: Double(index) + 0.003)
            }
            try await events.insert(retries, source: "app")
            let rows = try await client.rows("SELECT count() AS n FROM events")
            #expect(rows.first?["n"] == .int(14))

            try await events.prepare()
            #expect(try await events.count(source: "app") == 10)
            let marked = try await client.rows("SELECT count() AS n FROM \(identifier: ClickHouseEvents.resentTable)")
            #expect(marked.first?["n"] == .int(8))  // both times of each of the four
            try await events.prepare()
            let again = try await client.rows("SELECT count() AS n FROM \(identifier: ClickHouseEvents.resentTable)")
            #expect(again.first?["n"] == .int(8))
            let leftovers = try await client.rows(
                "SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name LIKE '%filling%'")
            #expect(leftovers.first?["n"] == .int(0))
        }
    }

    @Test func theSameMessageIdInAnotherSourceIsAnotherEvent() async throws {
        try await ClickHouseTestEnvironment.withDatabase { client in
            var events = ClickHouseEvents(client: client)
            try await events.prepare()
            let message = TestMessages.ingest("Opened", id: "shared-id")
            try await events.insert([message], source: "app")
            try await events.insert([message], source: "web")
            #expect(try await events.count(source: "app") == 1)
            #expect(try await events.count(source: "web") == 1)
        }
    }

    @Test func storesTheColumnsTheInsightsRead() async throws {
        try await ClickHouseTestEnvironment.withDatabase { client in
            var events = ClickHouseEvents(client: client)
            try await events.prepare()
            var message = TestMessages.ingest(
                "Purchased", id: "p-1", session: "s-9", user: "user-7", anonymous: "anon-7", at: 1.25,
                properties: ["plan": "pro", "price": 9.5, "nested": ["tier": "inner"]])
            message.timestamp = Timestamp.milliseconds(TestMessages.base) + 1250
            try await events.insert([message], source: "app")
            let rows = try await client.rows(
                """
                SELECT event, type, toUnixTimestamp(time) AS seconds, time_ms, person, session_id,
                       property_texts[indexOf(property_keys, 'plan')] AS plan,
                       property_numbers[indexOf(property_keys, 'price')] AS price
                FROM events
                """)
            #expect(rows.count == 1)
            let row = try #require(rows.first)
            #expect(row["event"] == .string("Purchased"))
            #expect(row["type"] == .string("track"))
            #expect(row["seconds"]?.intValue.map(Int64.init) == Timestamp.milliseconds(TestMessages.base) / 1000 + 1)
            #expect(row["time_ms"] == .int(250))
            #expect(row["person"] == .string("user-7"))
            #expect(row["session_id"] == .string("s-9"))
            #expect(row["plan"] == .string("pro"))
            #expect(row["price"]?.doubleValue == 9.5)
            // A new table stores neither the person as text nor the properties as JSON.
            #expect(events.storedLegacyColumns.isEmpty)
            let stored = try await client.rows(
                """
                SELECT name FROM system.columns WHERE database = currentDatabase() AND table = 'events'
                AND default_kind IN ('', 'DEFAULT') AND name IN ('person', 'properties')
                """)
            #expect(stored.isEmpty)
        }
    }

    @Test func retentionDropsWholeMonths() async throws {
        try await ClickHouseTestEnvironment.withDatabase { client in
            var events = ClickHouseEvents(client: client)
            try await events.prepare()
            // January, February and March 2026.
            let messages = [0.0, 20, 31, 45, 59, 70].map { days in
                TestMessages.ingest("Opened", at: days * Self.day)
            }
            try await events.insert(messages, source: "app")
            // A January and a March message resent: their ids go with their months.
            let resent = [messages[0], messages[5]]
            try await events.insert(resent, resent: Set(resent.map(\.messageId)), source: "app")
            #expect(try await events.count(source: "app") == 6)
            let march = Timestamp.milliseconds(TestMessages.base) + 59 * 86_400_000
            let midMarch = march + 10 * 86_400_000
            // Mid-March: January and February end before it; March does not.
            #expect(try await events.dropMonths(endingBy: midMarch) == [202601, 202602])
            #expect(try await events.count(source: "app") == 2)
            let ids = try await client.rows("SELECT message_id FROM \(identifier: ClickHouseEvents.resentTable)")
            #expect(ids.map { $0["message_id"] } == [.string(messages[5].messageId)])
            #expect(try await events.dropMonths(endingBy: march) == [])
            #expect(try await events.count(source: "app") == 2)
        }
    }

    @Test func aDeletionReachesClickHouse() async throws {
        try await ClickHouseTestEnvironment.withDatabase { client in
            var events = ClickHouseEvents(client: client)
            try await events.prepare()
            try await events.insert(
                [
                    TestMessages.ingest("Opened", user: "leaving", anonymous: "anon-l"),
                    TestMessages.ingest("Opened", user: nil, anonymous: "anon-l"),
                    TestMessages.ingest("Opened", user: nil, anonymous: "anon-before-login"),
                    TestMessages.ingest("Opened", user: "staying", anonymous: "anon-s"),
                ], source: "app")
            var alias = TestMessages.ingest("", type: .alias, user: "staying", anonymous: nil)
            alias.payload = #"{"type":"alias","userId":"staying","previousId":"anon-before-login","messageId":"a-1"}"#
            try await events.insert([alias], source: "app")
            try await events.insert(
                [TestMessages.ingest("Opened", user: "leaving", anonymous: "anon-l")], source: "web")
            try await events.delete(
                source: "app", userIds: ["leaving", "it's"], anonymousIds: ["anon-l", "anon-before-login"])
            #expect(try await events.count(source: "app") == 1)
            #expect(try await events.count(source: "web") == 1)
            let left = try await client.rows(
                "SELECT user_id FROM events WHERE source = 'app'")
            #expect(left.first?["user_id"] == .string("staying"))
        }
    }
}

@Suite("ClickHouse event values")
struct ClickHouseEventValuesTests {
    @Test(arguments: [
        (Int64(1_767_225_601_250), Int64(1_767_225_601), Int64(250)), (Int64(0), Int64(0), Int64(0)),
        (Int64(999), Int64(0), Int64(999)),
    ])
    func splitsMilliseconds(instant: Int64, seconds: Int64, milliseconds: Int64) {
        #expect(ClickHouseEvents.split(instant) == (seconds, milliseconds))
    }

    @Test func theMonthThatHoldsAnInstantIsKept() {
        let firstOfMarch2026: Int64 = 1_772_323_200_000
        #expect(ClickHouseEvents.firstMonthKept(endingBy: firstOfMarch2026) == 202603)
        #expect(ClickHouseEvents.firstMonthKept(endingBy: firstOfMarch2026 - 1) == 202602)
        #expect(ClickHouseEvents.firstMonthKept(endingBy: 0) == 197001)
    }

    @Test func propertiesAreLiftedOutOfThePayload() {
        #expect(PropertyColumns(payload: #"{"type":"track","properties":{"a":1}}"#, json: true).json == #"{"a":1}"#)
        #expect(PropertyColumns(payload: #"{"type":"track","properties":{"a":1}}"#).json == nil)
        #expect(PropertyColumns(payload: #"{"type":"identify","traits":{"a":1}}"#) == PropertyColumns(payload: ""))
        #expect(PropertyColumns(payload: "not json", json: true).json == "{}")
        #expect(PropertyColumns(payload: "not json").keys.isEmpty)
    }

    /// The arrays hold the top level only, in name order, each member read as the SQL stores read
    /// a property: null members are absent, text as it is, numbers also as numbers.
    @Test func eachTopLevelMemberHasItsTextAndNumber() {
        let payload = #"""
            {"type":"track","properties":{"plan":"pro","n":12,"f":2.5,"s":"12","b":true,"z":null,
            "o":{"plan":"nested"},"l":[1,"x"]}}
            """#
        let columns = PropertyColumns(payload: payload)
        #expect(columns.keys == ["b", "f", "l", "n", "o", "plan", "s"])
        #expect(columns.texts == ["true", "2.5", #"[1,"x"]"#, "12", #"{"plan":"nested"}"#, "pro", "12"])
        #expect(columns.numbers == [0, 2.5, 0, 12, 0, 0, 0])
        #expect(columns.numeric == [false, true, false, true, false, false, false])
    }
}
