import Foundation

/// What an insight asks of the store that holds the events: the read seam, as ``EventWriter`` is
/// the write seam.
///
/// One conformer per engine, chosen once when the storage opens (``SQLCollectorStorage/insights``):
/// ``SQLiteInsights`` (`Storage/SQLite/ReadPath/`), ``PostgresInsights`` (`Storage/PostgreSQL/`) and
/// ``ClickHouseInsightEngine`` (`Storage/ClickHouse/`, with `--events`). Each answers from its own
/// folder, in the way its database does best; what SQLite and PostgreSQL both run is printed once,
/// with bound values, by ``SQLInsightEngine``. The brute-force suites hold each engine to the
/// events as they were sent (ClickHouse's two documented departures: people counted as 64-bit
/// hashes of their ids, and events of one person at one millisecond taken in no order of arrival).
///
/// The queries are the typed selections the routes built and checked (``TrendQuery``,
/// ``FunnelQuery``, ``PathQuery``: event names, range and zone, filters on event properties and on
/// people's traits, a cohort's people, a breakdown); an engine prints them, it does not parse.
/// The people an engine counts are ``PersonKeys``' numbers (ClickHouse: the hash of the person's
/// id), merges followed. A fourth engine is a new folder with a conformer and its opener.
protocol InsightEngine: Sendable {
    /// `sqlite`, `postgres` or `clickhouse`, for logs and tests.
    var engineName: String { get }

    /// The `limit` most frequent values of `property` among the trend's events, absent ones left
    /// out (they always have a series of their own).
    func trendTopValues(source: String, query: TrendQuery, property: String, limit: Int) async throws -> [String]
    /// Events, distinct people and the math's aggregate per interval of the trend's events.
    func trendTotals(source: String, query: TrendQuery) async throws -> TrendTotals
    /// Events, distinct people and the math's aggregate over the trend's whole range: its people
    /// once however many intervals they did it in.
    func trendAggregate(source: String, query: TrendQuery) async throws -> TrendCount
    /// Events and the math's aggregate per interval, people left at 0 (the caller reads them from
    /// the daily people): the cheapest count an engine has.
    func trendCounts(source: String, query: TrendQuery) async throws -> TrendTotals
    /// Events and distinct people per interval and value of `property` (nil: absent), and per
    /// interval over all values (their people only when `people`), in one pass; the rows are nil
    /// when there are more than `limit` (interval, value) pairs.
    func trendByValue(source: String, query: TrendQuery, property: String, limit: Int, people: Bool) async throws
        -> TrendPass
    /// Events and distinct people per interval and breakdown value: each of the `top` values on
    /// its own, absent values together, every other value as "other".
    func trendBreakdown(source: String, query: TrendQuery, property: String, top: [String]) async throws
        -> [TrendRow]
    /// Every event of the funnel's steps from its start to its window after its end that meets
    /// its filters, in any order: its person, time, order of arrival, the steps it is, and the
    /// breakdown's value on first-step events (``FunnelRow``).
    func funnelRows(source: String, query: FunnelQuery) async throws -> [FunnelRow]
    /// How many people went each way from the path's event, over the events of `names` (the
    /// source's names without the excluded ones; the path's event among them).
    func paths(source: String, query: PathQuery, names: [String]) async throws -> [PathCount]
}
