import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// The read seam: whatever conforms to ``InsightEngine`` answers the insight routes. A fourth
/// engine (``MemoryInsights``, in `Support/MemoryEngine/`) is one conformer, and gives the same
/// answers as SQLite's over the same events.
struct InsightEngineTests {
    static let day: Int64 = 86_400_000
    static let base = Timestamp.milliseconds(TestMessages.base)
    static let range = "from=2026-01-01T00%3A00%3A00Z&to=2026-01-03T00%3A00%3A00Z"

    /// The events both engines are given: people 1 and 2 view then buy; person 3 views twice;
    /// person 2 buys again the next day.
    static let events: [(person: String, name: String, minutes: Int64, plan: String)] = [
        ("u1", "Product Viewed", 10, "pro"), ("u1", "Order Completed", 20, "pro"),
        ("u2", "Product Viewed", 30, "free"), ("u2", "Order Completed", 40, "free"),
        ("u3", "Product Viewed", 50, "pro"), ("u3", "Product Viewed", 60, "pro"),
        ("u2", "Order Completed", 24 * 60 + 5, "free"),
    ]

    static func memory(_ events: [(person: String, name: String, minutes: Int64, plan: String)]) -> MemoryInsights {
        MemoryInsights(
            events.map { event in
                MemoryInsights.Event(
                    name: event.name, person: Int64(event.person.dropFirst())!,
                    timestamp: base + event.minutes * 60_000, properties: ["plan": .string(event.plan)])
            })
    }

    static func messages(_ events: [(person: String, name: String, minutes: Int64, plan: String)]) -> [JSONValue] {
        events.enumerated().map { index, event in
            TestMessages.track(
                event.name, id: "m\(index)", user: event.person, anonymous: "a-\(event.person)",
                at: TimeInterval(event.minutes * 60), properties: ["plan": .string(event.plan)])
        }
    }

    /// The storage holds one purchase; the engine holds the seven events above. Every insight
    /// route answers with the engine's events: the trend counts its 3 purchases, the funnel its 2
    /// buyers of 3 viewers, the paths its 2 people who bought after viewing.
    @Test func aFourthEngineAnswersTheInsightRoutes() async throws {
        let engine = Self.memory(Self.events)
        try await RouterHarness.run(insights: engine) { client, _ async throws in
            let stored = try await client.execute(
                uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey),
                body: ByteBuffer(
                    json: TestMessages.batch(
                        Self.messages([("u9", "Product Viewed", 5, "pro"), ("u9", "Order Completed", 15, "pro")]))))
            #expect(try stored.json["accepted"] == 2)
            let trend = try await AnalyticsRouteTests.get(
                client, "/v1/query/trends?event=Order+Completed&interval=day&\(Self.range)")
            #expect(trend.status == .ok)
            #expect(try trend.json["totals"]?.arrayValue?.map { $0["count"] } == [2, 1])
            let funnel = try await AnalyticsRouteTests.get(
                client, "/v1/query/funnel?steps=Product+Viewed,Order+Completed&window=1h&\(Self.range)")
            #expect(try funnel.json["steps"]?.arrayValue?.map { $0["users"] } == [3, 2])
            let paths = try await AnalyticsRouteTests.get(
                client, "/v1/query/paths?start=Product+Viewed&\(Self.range)")
            #expect(try paths.json["people"] == 3)
            #expect(try paths.json["root"]?["children"]?[0]?["event"] == "Order Completed")
            #expect(try paths.json["root"]?["children"]?[0]?["people"] == 2)
        }
        #expect(Set(engine.asked).isSuperset(of: ["trendCounts", "funnelRows", "paths"]))
    }

    /// Over the same events, the fourth engine's answers are SQLite's: a trend by day with a
    /// breakdown and a filter, a funnel with a breakdown, and paths after an event.
    @Test func aFourthEngineAnswersAsSQLiteDoes() async throws {
        let engine = Self.memory(Self.events)
        try await withStorage(.sqlite) { storage async throws in
            var ingest: [IngestMessage] = []
            for (index, event) in Self.events.enumerated() {
                ingest.append(
                    TestMessages.ingest(
                        event.name, id: "m\(index)", user: event.person, anonymous: "a-\(event.person)",
                        at: TimeInterval(event.minutes * 60), properties: ["plan": .string(event.plan)]))
            }
            #expect(try await storage.insert(ingest, source: "default").allSatisfy { $0 })
            let sqlite = CollectorQuery(storage: storage)
            let memory = CollectorQuery(storage: storage, insights: engine)
            let values = [
                "from": "2026-01-01T00:00:00Z", "to": "2026-01-03T00:00:00Z", "interval": "day",
                "event": "Order Completed", "breakdown": "plan", "window": "1h", "start": "Product Viewed",
            ]
            let parameters = AnalyticsParameters(now: TestMessages.base.addingTimeInterval(3 * 86_400), calendar: .utc)
            {
                values[$0]
            }
            var filtered = values
            filtered["where.1.property"] = "plan"
            filtered["where.1.value"] = "free"
            let withFilter = AnalyticsParameters(now: TestMessages.base.addingTimeInterval(3 * 86_400), calendar: .utc)
            {
                filtered[$0]
            }
            for trend in [try parameters.trend(), try withFilter.trend()] {
                let expected = try await sqlite.trend(source: "default", trend)
                let answered = try await memory.trend(source: "default", trend)
                #expect(answered.series == expected.series)
                #expect(answered.totals.map(\.count) == expected.totals.map(\.count))
            }
            let steps = values.merging(["steps": "Product Viewed,Order Completed"]) { $1 }
            let funnel = try AnalyticsParameters(now: TestMessages.base.addingTimeInterval(3 * 86_400), calendar: .utc)
            {
                steps[$0]
            }.funnel()
            #expect(
                try await memory.funnel(source: "default", funnel)
                    == (try await sqlite.funnel(source: "default", funnel)))
            let paths = try parameters.paths()
            #expect(
                try await memory.paths(source: "default", paths) == (try await sqlite.paths(source: "default", paths)))
        }
    }
}
