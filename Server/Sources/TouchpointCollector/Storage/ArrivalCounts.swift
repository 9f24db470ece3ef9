/// How many events each source stored per minute of their arrival (`received_at`), kept by the
/// writes in their transactions (schema 21), for the overview's "events received": counted by
/// event time, a backfill of old events showed none received.
///
/// A row is (source, minute, events). As `source_counts` (``SourceCounts``): SQLite's one writer
/// adds to a row per source and minute; PostgreSQL's writers each add a row of their own, summed
/// when read, and a source's rows of the last day are folded into one per minute now and then
/// (``fold(source:now:in:)``). What arrived stays received: deletion and retention leave the
/// counts (a row a minute, about 10 MB a year for a source that never stops).
enum ArrivalCounts {
    /// SQLite's statement that adds a write's events to a source's minute (source, minute, events).
    static let sqliteUpsert = """
        INSERT INTO arrivals (source, minute, events) VALUES (?, ?, ?) \
        ON CONFLICT (source, minute) DO UPDATE SET events = arrivals.events + excluded.events
        """

    /// The minutes a PostgreSQL fold covers, before the current one.
    static let foldedMinutes: Int64 = 24 * 60

    /// Replaces `source`'s rows of the last ``foldedMinutes`` before `now` (ms) by one per minute
    /// (PostgreSQL), in one statement: the rows it deletes are the ones it sums.
    static func fold(source: String, now: Int64, in backend: any SQLBackend) async throws {
        var statement = SQLStatement(backend.dialect, "WITH gone AS (DELETE FROM arrivals WHERE source = ")
        statement.bind(.text(source))
        statement.append(" AND minute >= ")
        statement.bind(.int(now / 60_000 - foldedMinutes))
        statement.append(
            """
             RETURNING source, minute, events) INSERT INTO arrivals (source, minute, events) \
            SELECT source, minute, SUM(events) FROM gone GROUP BY source, minute
            """)
        _ = try await backend.writeStatement(statement.sql, statement.binds)
    }
}
