import Foundation
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// The time-range queries use the minute indexes, in their order (no sorting of the rows in range):
/// a change to the SQL's minute expression that no longer matches the index's shows up here.
struct QueryPlanTests {
    static func plan(_ statement: SQLStatement, on storage: SQLCollectorStorage) async throws -> String {
        let rows = try await storage.backend.query("EXPLAIN QUERY PLAN " + statement.sql, statement.binds)
        return rows.compactMap { $0.last?.text }.joined(separator: "\n")
    }

    @Test func timeRangeQueriesReadTheMinuteIndexesInOrder() async throws {
        try await withStorage(.sqlite) { storage async throws in
            let range = TimeRange(
                from: TestMessages.base, to: TestMessages.base.addingTimeInterval(3600))
            let byName = try await Self.plan(
                storage.eventsStatement(
                    source: "default", filter: EventFilter(name: "tap", range: range),
                    page: PageRequest(limit: 10, cursor: "29446260:17")),
                on: storage)
            #expect(byName.contains("events_name_minute"), "\(byName)")
            #expect(!byName.contains("TEMP B-TREE"), "\(byName)")

            let all = try await Self.plan(
                storage.eventsStatement(source: "default", filter: EventFilter(range: range), page: PageRequest()),
                on: storage)
            #expect(all.contains("events_minute"), "\(all)")
            #expect(!all.contains("TEMP B-TREE"), "\(all)")

            let perMinute = try await Self.plan(
                storage.eventsPerMinuteStatement(source: "default", range: range), on: storage)
            #expect(perMinute.contains("COVERING INDEX events_minute"), "\(perMinute)")
            #expect(!perMinute.contains("TEMP B-TREE"), "\(perMinute)")
        }
    }
}
