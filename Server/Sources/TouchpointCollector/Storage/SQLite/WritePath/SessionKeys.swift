import Logging
import TouchpointCore

/// How SQLite finds a session's row by (source, session id) without a random insert into an index
/// per new session (schema 19).
///
/// Session ids are random, so a unique index on them took each new session at a random place: at
/// 67 million events (9 million sessions) such an insert cost about 70 µs more than one at the
/// end of the table, a page of the index dirtied, written to the WAL and checkpointed per new
/// session (about one event in sixteen in web traffic). As ``MessageKeyIndex`` does for events:
///
/// - Each session has a 64-bit key: ``MessageKey`` of (source, session id), with the database's
///   secret (`touchpoint_message_key` in SQL).
/// - `session_keys (key, session)`, ordered by key, holds the keys of all sessions up to a
///   watermark of rowids (`storage_settings.session_keys_merged_through`).
/// - The keys of the sessions after the watermark are held in memory here (`sessions` itself is
///   their durable copy: they are read back from it when the collector starts).
/// - Now and then the keys in memory are merged into `session_keys` in key order, a few thousand
///   per transaction between ingest writes, so each page of the table is written about once per
///   merge; then the watermark moves and memory is freed.
///
/// A key gives the rows that may be the session's (in memory and in the table); each is compared
/// on the full (source, session id) before use, so two sessions that share a key are both kept,
/// and a key left behind by a deleted session or a write that rolled back matches nothing. A
/// trigger forgets a deleted session's key. `sessions.session_key` is the rowid, named so that
/// it never changes (`events.session_key` holds it).
final class SessionKeys: Sendable {
    /// The key function: (source, session id) → key.
    let key: MessageKeyIndex.KeyFunction

    private struct State {
        /// Keys of the sessions after the watermark, with their rowids.
        var recent = KeysInMemory()
        /// The last rowid whose key is in `session_keys`.
        var mergedThrough: Int64
        var isMerging = false
        /// Keys recorded while a merge runs (a deleted newest session's rowid can be given again,
        /// so one of them may fall at or below the merge's watermark).
        var recordedWhileMerging: [(key: Int64, row: Int64)] = []
        /// Keys looked up in `session_keys` (for `/metrics`).
        var tableLookups = 0
    }

    private let state: Locked<State>
    /// Keys in memory before a merge starts, at least.
    let minimumMerge: Int
    /// Keys in memory before a merge starts, at most, and the most one merge takes (about 40 bytes
    /// of memory a key).
    let maximumMerge: Int
    /// Keys per merge transaction.
    let mergeChunk = 4096
    private let task = MergeTask(merging: "session keys")

    static let watermarkName = "session_keys_merged_through"

    init(key: @escaping MessageKeyIndex.KeyFunction, mergedThrough: Int64, minimumMerge: Int, maximumMerge: Int) {
        self.key = key
        state = Locked(State(mergedThrough: mergedThrough))
        self.minimumMerge = minimumMerge
        self.maximumMerge = max(minimumMerge, maximumMerge)
    }

    /// Reads the watermark and the keys of the sessions after it, with the message keys' key
    /// function (``MessageKeyIndex/key``).
    static func load(
        _ connection: SQLiteConnection, key: @escaping MessageKeyIndex.KeyFunction, minimumMerge: Int = 50_000,
        maximumMerge: Int = 1_000_000
    ) throws -> SessionKeys {
        let watermark =
            try connection.execute("SELECT value FROM storage_settings WHERE name = ?", [.text(watermarkName)])
            .first?.first?.int ?? 0
        let keys = SessionKeys(
            key: key, mergedThrough: watermark, minimumMerge: minimumMerge, maximumMerge: maximumMerge)
        try connection.queryEach(
            "SELECT session_key, source, touchpoint_id(session_id) FROM sessions WHERE session_key > ?", [()],
            bind: { _, statement in try statement.bind(1, watermark) },
            row: { _, statement in
                let row = statement.row()
                let rowid = statement.integer(0)
                keys.state.withLock { $0.recent.insert(key(row[1].text ?? "", row[2].text ?? ""), row: rowid) }
            })
        return keys
    }

    // MARK: Lookups

    /// The rows that may be the sessions with `keys`: those in memory and those in `session_keys`,
    /// read on `connection` (memory first: a merge frees a key from memory only after the table
    /// has it).
    func candidates(_ keys: [Int64], on connection: SQLiteConnection) throws -> [[Int64]] {
        var found = [[Int64]](repeating: [], count: keys.count)
        state.withLock { state in
            for (index, key) in keys.enumerated() { state.recent.forEachRow(of: key) { found[index].append($0) } }
            state.tableLookups += keys.count
        }
        try connection.queryEach(
            Self.sqliteProbe, Array(keys.indices), bind: { index, statement in try statement.bind(1, keys[index]) },
            row: { index, statement in
                let rowid = statement.integer(0)
                if !found[index].contains(rowid) { found[index].append(rowid) }
            })
        return found
    }

    /// The rows in memory that may be the sessions with `keys` (for a query, which reads the table
    /// in SQL: taken before its read begins).
    func rowsInMemory(_ keys: [Int64]) -> [Int64] {
        state.withLock { state in
            var rows: [Int64] = []
            for key in keys { state.recent.forEachRow(of: key) { rows.append($0) } }
            return rows
        }
    }

    /// One key's rows in `session_keys`.
    private static let sqliteProbe = "SELECT session FROM session_keys WHERE key = ?"

    /// Notes new sessions' rows, in the writer's transaction that inserts them (a key in memory
    /// whose row was rolled back is harmless: each row found is compared). A row at or below the
    /// watermark (a deleted newest session's rowid given again) goes into the table now, since a
    /// start reads back only the sessions after the watermark.
    func record(_ new: [(key: Int64, row: Int64)], on connection: SQLiteConnection) throws {
        guard !new.isEmpty else { return }
        let behind = state.withLock { state in
            for entry in new { state.recent.insert(entry.key, row: entry.row) }
            if state.isMerging { state.recordedWhileMerging += new }
            return new.filter { $0.row <= state.mergedThrough }
        }
        try Self.insert(behind, on: connection)
    }

    private static func insert(_ entries: some Collection<(key: Int64, row: Int64)>, on connection: SQLiteConnection)
        throws
    {
        _ = try connection.executeEach("INSERT OR IGNORE INTO session_keys (key, session) VALUES (?, ?)", entries) {
            entry, statement in
            try statement.bind(1, entry.key)
            try statement.bind(2, entry.row)
        }
    }

    /// Keys held in memory (for tests and the merge's trigger).
    var keysInMemory: Int { state.withLock { $0.recent.count } }

    /// The last rowid whose key is in `session_keys`.
    var mergedThrough: Int64 { state.withLock { $0.mergedThrough } }

    /// Keys looked up in `session_keys` so far.
    var tableLookups: Int { state.withLock { $0.tableLookups } }

    /// For `/metrics` (Prometheus text format 0.0.4): the keys held in memory until the next
    /// merge, and the keys looked up in `session_keys` (sessions the writer or a reader ahead of it
    /// did not remember).
    func prometheusText() -> String {
        let (inMemory, lookups) = state.withLock { ($0.recent.count, $0.tableLookups) }
        return """
            # HELP touchpoint_session_keys_in_memory Keys of new sessions held in memory until the next merge into session_keys.
            # TYPE touchpoint_session_keys_in_memory gauge
            touchpoint_session_keys_in_memory \(inMemory)
            # HELP touchpoint_session_key_table_lookups_total Session keys looked up in session_keys (sessions not remembered).
            # TYPE touchpoint_session_key_table_lookups_total counter
            touchpoint_session_key_table_lookups_total \(lookups)

            """
    }

    // MARK: Merging

    /// Starts a merge in the background when one is due: its transactions take turns with the
    /// writes that follow.
    func mergeIfDue(into backend: SQLiteBackend, logger: Logger) {
        guard claimMerge() else { return }
        task.start(logger: logger) {
            try await self.merge(into: backend)
        } again: {
            self.claimMerge()
        }
    }

    /// Waits for the merge started last, if any, to finish.
    func waitForMerge() async { await task.wait() }

    /// Stops a merge in progress after its current transaction (before the database closes).
    func stopMerging() async { await task.stop() }

    /// Whether enough keys are in memory to merge them (an eighth of the sessions merged so far,
    /// within the bounds) and no merge runs: then marks one as running.
    func claimMerge() -> Bool {
        guard !task.stopped else { return false }
        return state.withLock { state in
            let due = min(maximumMerge, max(minimumMerge, Int(state.mergedThrough / 8)))
            guard !state.isMerging, state.recent.count >= due else { return false }
            state.isMerging = true
            return true
        }
    }

    /// Moves the oldest keys in memory (at most ``maximumMerge``) into `session_keys` in key order,
    /// then moves the watermark and frees them. Ingest writes go on between the transactions; a
    /// key is in memory or in the table (or both) throughout. A crash part-way leaves the
    /// watermark where it was: the next start reads those keys again, and the table ignores the
    /// ones it has.
    func merge(into backend: SQLiteBackend) async throws {
        defer {
            state.withLock { state in
                state.isMerging = false
                state.recordedWhileMerging = []
            }
        }
        let entries = state.withLock { [maximumMerge] state in
            state.recordedWhileMerging = []
            return state.recent.oldestEntries(atMost: maximumMerge)
        }
        guard let through = entries.map(\.row).max() else { return }
        let sorted = entries.sorted { $0.key != $1.key ? $0.key < $1.key : $0.row < $1.row }
        try await KeyMerge.write(sorted, chunk: mergeChunk, into: backend) { chunk, connection in
            try Self.insert(chunk, on: connection)
        }
        try await backend.writeNow { [state] connection in
            // Behind the writer's lock no session is being stored: the late keys are all recorded.
            let late = state.withLock { $0.recordedWhileMerging.filter { $0.row <= through } }
            try Self.insert(late, on: connection)
            try connection.execute(
                "INSERT OR REPLACE INTO storage_settings (name, value) VALUES (?, ?)",
                [.text(Self.watermarkName), .int(through)])
        }
        state.withLock { $0.mergedThrough = max($0.mergedThrough, through) }
        await KeyMerge.free(entries, slice: 16_384, between: nil) { slice in
            state.withLock { state in
                for entry in slice { state.recent.remove(entry.key, row: entry.row) }
            }
        }
    }
}
