import Foundation
import TouchpointCore

/// ClickHouse's ``InsightEngine`` (`--events clickhouse://…`): each insight asked of ClickHouse
/// (``ClickHouseInsights``) with the source's merges read from the database of people, and left to
/// that database's engine (`sql`) where ClickHouse cannot answer it: a cohort or a filter on
/// people's traits (both name people by the database's numbers and traits), and a query too long
/// for ClickHouse's URL (``ClickHouseClient/URITooLong``).
///
/// Which engine answers is decided here, once per insight, by what the query asks — never by
/// what the events hold, so nothing a write key sends moves a query off ClickHouse.
struct ClickHouseInsightEngine: InsightEngine {
    let events: ClickHouseEvents
    /// The engine of the database that holds people, merges and traits (PostgreSQL's).
    let sql: any SQLInsightEngine

    var engineName: String { "clickhouse" }

    /// ClickHouse's answer to a query of `source` with `filters` and a cohort of `people`, asked
    /// through `body`; nil: the database's engine answers. Without `persons` the source's merges
    /// are not read: `body` counts events, not people.
    private func answer<Answer: Sendable>(
        _ source: String, _ filters: [PropertyFilter], _ people: Set<Int64>?, persons: Bool = true,
        _ body: (ClickHouseInsights) async throws -> Answer
    ) async throws -> Answer? {
        guard ClickHouseInsights.answers(filters: filters, people: people) else { return nil }
        let merges = persons ? try await merges(of: source) : nil
        do {
            return try await body(ClickHouseInsights(client: events.client, source: source, merges: merges))
        } catch is ClickHouseClient.URITooLong {
            return nil
        }
    }

    /// Each merge of `source`: the merged anonymous id and the user id it was merged into.
    private func merges(of source: String) async throws -> [(anonymous: String, user: String)] {
        var statement = SQLStatement(
            sql.dialect,
            """
            SELECT a.person, u.person FROM person_merges m JOIN person_keys a ON a.person_key = -m.anonymous_key \
            JOIN person_keys u ON u.person_key = m.user_key WHERE a.source = 
            """)
        statement.bind(.text(source))
        return try await sql.database.query(statement).compactMap { row -> (anonymous: String, user: String)? in
            guard let anonymous = row[0].text, let user = row[1].text else { return nil }
            return (anonymous, user)
        }
    }

    func trendTopValues(source: String, query: TrendQuery, property: String, limit: Int) async throws -> [String] {
        if let answer = try await answer(
            source, query.filters, query.people, persons: false,
            { try await $0.trendTopValues(query, property: property, limit: limit) })
        {
            return answer
        }
        return try await sql.trendTopValues(source: source, query: query, property: property, limit: limit)
    }

    func trendTotals(source: String, query: TrendQuery) async throws -> TrendTotals {
        if let answer = try await answer(source, query.filters, query.people, { try await $0.trendTotals(query) }) {
            return answer
        }
        return try await sql.trendTotals(source: source, query: query)
    }

    func trendAggregate(source: String, query: TrendQuery) async throws -> TrendCount {
        if let answer = try await answer(source, query.filters, query.people, { try await $0.trendAggregate(query) }) {
            return answer
        }
        return try await sql.trendAggregate(source: source, query: query)
    }

    func trendCounts(source: String, query: TrendQuery) async throws -> TrendTotals {
        if let answer = try await answer(
            source, query.filters, query.people, persons: false, { try await $0.trendTotals(query, people: false) })
        {
            return answer
        }
        return try await sql.trendCounts(source: source, query: query)
    }

    func trendByValue(source: String, query: TrendQuery, property: String, limit: Int, people: Bool) async throws
        -> TrendPass
    {
        if let answer = try await answer(
            source, query.filters, query.people,
            { insights in
                async let totals = insights.trendTotals(query, people: people)
                let rows = try await insights.trendByValue(query, property: property, limit: limit)
                return TrendPass(rows: rows, totals: try await totals)
            })
        {
            return answer
        }
        return try await sql.trendByValue(
            source: source, query: query, property: property, limit: limit, people: people)
    }

    func trendBreakdown(source: String, query: TrendQuery, property: String, top: [String]) async throws
        -> [TrendRow]
    {
        if let answer = try await answer(
            source, query.filters, query.people, { try await $0.trendBreakdown(query, property: property, top: top) })
        {
            return answer
        }
        return try await sql.trendBreakdown(source: source, query: query, property: property, top: top)
    }

    func funnelRows(source: String, query: FunnelQuery) async throws -> [FunnelRow] {
        if let answer = try await answer(
            source, query.filters + query.steps.flatMap(\.filters), query.people, { try await $0.funnelRows(query) })
        {
            return answer
        }
        return try await sql.funnelRows(source: source, query: query)
    }

    func paths(source: String, query: PathQuery, names: [String]) async throws -> [PathCount] {
        if let answer = try await answer(source, [], query.people, { try await $0.paths(query, names: names) }) {
            return answer
        }
        return try await sql.paths(source: source, query: query, names: names)
    }
}
