import Foundation
import TouchpointCore

/// PostgreSQL's ``InsightEngine``: the shared SQL (``SQLInsightEngine``), and PostgreSQL's own
/// ways where they are faster: a breakdown's pairs and totals in one statement (grouping sets, on
/// parallel workers of its own), a funnel's step events packed into one value per half of its
/// range (``PackedFunnelRows``), and paths found in SQL by a hash join of each person's first
/// start with their events (`PostgresInsights+Paths.swift`).
struct PostgresInsights: SQLInsightEngine {
    let backend: PostgresBackend
    let eventMinutes: EventMinutesReader

    var database: any SQLBackend { backend }
    var engineName: String { "postgres" }

    /// One statement over the whole range: PostgreSQL plans it on parallel workers of its own.
    func minuteCountsFromIndex(source: String, event: String, from: Int64, to: Int64) async throws
        -> [(minute: Int64, count: Int64)]
    {
        Self.minuteCounts(
            try await backend.query(minuteCountsStatement(source: source, event: event, from: from, to: to)))
    }

    /// With the totals' people, the pairs and the intervals in one statement: `GROUPING(val)`
    /// tells an interval's total from its pairs. At most `limit` pairs and a total per interval fit
    /// in `limit` + the intervals' count rows, so one row more, whatever their order, means more
    /// pairs than `limit`. Without them, the totals are counted from the name-and-minute index
    /// (``trendCounts(source:query:)``) while the pairs read every event.
    func trendByValue(source: String, query: TrendQuery, property: String, limit: Int, people: Bool) async throws
        -> TrendPass
    {
        guard people else {
            async let totals = trendCounts(source: source, query: query)
            let (sql, binds) = trendGroupsStatement(source: source, query: query, property: property, limit: limit)
            let rows = trendGroups(try await backend.query(sql, binds), limit: limit)
            return TrendPass(rows: rows, totals: try await totals)
        }
        let intervals = query.range.intervals(query.interval).count
        let (sql, binds) = select(
            "SELECT idx, val, GROUPING(val), \(trendAggregates(query)) FROM (\(trendColumns(query, breakdown: property))",
            trendEvents(query, source: source),
            suffix: ") q GROUP BY GROUPING SETS ((idx, val), (idx)) LIMIT \(limit + intervals + 1)")
        var rows: [TrendRow] = []
        var totals: TrendTotals = [:]
        for row in try await backend.query(sql, binds) {
            guard let index = row[0].int, let isTotal = row[2].int, let counted = trendCount(row, at: 3) else {
                continue
            }
            if isTotal == 1 {
                totals[index] = counted
            } else {
                rows.append(TrendRow(index: index, value: row[1].text, isOther: false, counted))
            }
        }
        guard rows.count <= limit else { return TrendPass(rows: nil, totals: nil) }
        return TrendPass(rows: rows, totals: totals)
    }

    func trendBreakdown(source: String, query: TrendQuery, property: String, top: [String]) async throws
        -> [TrendRow]
    {
        try await trendBreakdownInSQL(source: source, query: query, property: property, top: top)
    }

    /// The halves of the range at once on two connections (PostgreSQL 15 plans this scan without
    /// parallel workers), each packing its rows into one value (``PackedFunnelRows``): a funnel's
    /// million step events as rows cost the collector seconds taking them off the connection.
    func funnelRows(source: String, query: FunnelQuery) async throws -> [FunnelRow] {
        let values = query.breakdown != nil
        return try await funnelRowsByHalves(query: query) { from, to in
            let statement = funnelStatement(
                source: source, query: query, from: from, to: to, columns: PackedFunnelRows.aggregate(values: values),
                storedKeys: false, valueText: { "textsend(\($0))" })
            let rows = try await backend.query(statement.sql, statement.binds, bytesAt: [0])
            // No step event: `string_agg` of no rows is NULL.
            guard let packed = rows.first?.first, !packed.isNull else { return [] }
            guard let bytes = packed.bytes else {
                throw StorageError(code: .corruptRow, message: "a funnel's packed step events did not come as bytes")
            }
            return try PackedFunnelRows.rows(bytes, values: values)
        }
    }
}
