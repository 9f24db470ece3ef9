import TouchpointCore

/// How one database stores ingest's events: the part of the storage each database brings.
///
/// SQLite has one writer: ``SQLiteEventWriter`` stores the requests that wait for it together
/// (group commit), deduplicates through 64-bit keys held in memory and merged into a table in
/// the background, finds sessions and people by keys and remembered rowids, and keeps shared
/// contexts once. PostgreSQL's writes run in parallel on several connections:
/// ``PostgresEventWriter`` stores each request with one prepared statement, its unique indexes
/// deciding which copy of a message was first. ``SQLCollectorStorage`` hands each request to its
/// writer and reads everything back with SQL both databases share.
protocol EventWriter: Sendable {
    /// Stores the messages that are new for `source`, with their sessions, people, identity links
    /// and counts, in one transaction.
    /// - Returns: one flag per message, true when it was stored now, false when it was already
    ///   stored (by an earlier request, another collector, or earlier in the same array).
    func insert(_ messages: [IngestMessage], source: String) async throws -> [Bool]

    /// Appends to `statement` the condition that an `events` row is an event of one of the
    /// sessions `sessionIds` of `source`: how the writer ties events to their sessions decides
    /// how they are found.
    func appendSessions(source: String, _ sessionIds: [String], to statement: inout SQLStatement)

    /// Called inside the transaction of a deletion that deletes people's numbers
    /// (`person_keys`, ``PersonKeys``), which the database may give again to new people: a writer
    /// that remembers numbers forgets them all.
    func forgetPeople()

    /// Called inside a transaction that takes people out of the daily people
    /// (``DailyPeopleRollup``): retention, a deletion. A writer that remembers who it counted
    /// forgets it.
    func forgetDailyPeople()

    /// What the writer measures, for `/metrics` (Prometheus text format 0.0.4; empty when it
    /// measures nothing).
    func metrics() -> String

    /// Stops what the writer runs in the background and saves what it keeps for the next start,
    /// before the database closes.
    func close() async
}
