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

    /// A batch of the count of a kept property's values reads its seqs by the rowid, not every
    /// entry of the source in an index.
    @Test func aBatchOfTheValuesCountReadsItsSeqsOnly() async throws {
        try await withStorage(.sqlite) { storage async throws in
            let plan = try await Self.plan(
                ValueRollup.batchRead(.sqlite, source: "default", after: 100, through: 20_100), on: storage)
            #expect(plan.contains("INTEGER PRIMARY KEY (rowid>? AND rowid<?)"), "\(plan)")
        }
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

            // A page after a cursor starts at the cursor's minute in the index (seq is only the
            // rowid there), not at the source's first entry.
            let next = try await Self.plan(
                storage.eventsStatement(
                    source: "default", filter: EventFilter(), page: PageRequest(limit: 10, cursor: "29446260:17")),
                on: storage)
            #expect(next.contains("INDEX events_minute (source=? AND <expr>>?)"), "\(next)")
            #expect(!next.contains("TEMP B-TREE"), "\(next)")

            // Counted through the minute index, searched by the range's minutes (the exact times of
            // the first and last minute are read from their rows).
            let perMinute = try await Self.plan(
                storage.eventsPerMinuteStatement(source: "default", range: range), on: storage)
            #expect(perMinute.contains("INDEX events_minute (source=? AND <expr>>? AND <expr><?)"), "\(perMinute)")
            #expect(!perMinute.contains("TEMP B-TREE"), "\(perMinute)")
        }
    }

    /// PostgreSQL's JIT compilation cost the analytics queries more than it saved; the collector's
    /// connections turn it off.
    @Test(.enabled(if: PostgresTestEnvironment.enabled))
    func postgresConnectionsRunWithoutJIT() async throws {
        try await withStorage(.postgres) { storage async throws in
            #expect(try await storage.backend.query("SHOW jit", []).first?.first?.text == "off")
        }
    }

    /// The analytics queries read an event name's minutes, times and people from the
    /// name-and-minute index alone, and find a person's merged user through the merges' primary
    /// key; the people queries use their own small indexes.
    @Test func analyticsQueriesUseTheIndexes() async throws {
        try await withStorage(.sqlite) { storage async throws in
            let from = Timestamp.milliseconds(TestMessages.base)
            func eventsNamed(_ names: [String], from: Int64, to: Int64) -> SQLStatement {
                var statement = SQLStatement(storage.dialect)
                statement.appendEventsNamed(names, source: "default", from: from, to: to, filters: [], people: nil)
                return statement
            }
            let rest = eventsNamed(["buy"], from: from, to: from + 30 * 86_400_000)
            var person = SQLStatement(storage.dialect, "SELECT \(PersonKeys.expression), timestamp")
            person.append(rest.sql)
            let personPlan = try await Self.plan(
                SQLStatement(storage.dialect, person.sql).withBinds(rest.binds), on: storage)
            #expect(personPlan.contains("COVERING INDEX events_name_minute"), "\(personPlan)")
            #expect(personPlan.contains("SEARCH person_merges USING INTEGER PRIMARY KEY"), "\(personPlan)")
            let steps = eventsNamed(["a", "b", "c"], from: from, to: from + 86_400_000)
            let stepsPlan = try await Self.plan(
                SQLStatement(storage.dialect, "SELECT event" + steps.sql).withBinds(steps.binds), on: storage)
            #expect(stepsPlan.contains("events_name_minute"), "\(stepsPlan)")

            let identify = try await storage.backend.query(
                "EXPLAIN QUERY PLAN SELECT user_id, payload FROM events WHERE type = 'identify' AND source = ? AND user_id IN (?, ?) ORDER BY seq",
                [.text("default"), .text("u1"), .text("u2")])
            let identifyPlan = identify.compactMap { $0.last?.text }.joined(separator: "\n")
            #expect(identifyPlan.contains("events_identify"), "\(identifyPlan)")
            let merged = try await storage.backend.query(
                "EXPLAIN QUERY PLAN SELECT anonymous_id FROM identities WHERE source = ? AND user_id = ? ORDER BY merged_at, anonymous_id",
                [.text("default"), .text("u1")])
            let mergedPlan = merged.compactMap { $0.last?.text }.joined(separator: "\n")
            #expect(mergedPlan.contains("identities_user"), "\(mergedPlan)")
            let recent = try await storage.backend.query(
                "EXPLAIN QUERY PLAN SELECT user_id FROM profiles WHERE source = ? ORDER BY last_seen DESC, user_id DESC LIMIT 51",
                [.text("default")])
            let recentPlan = recent.compactMap { $0.last?.text }.joined(separator: "\n")
            #expect(recentPlan.contains("profiles_recent"), "\(recentPlan)")
        }
    }
}
