import TouchpointCore

/// How many events of each name each source holds per minute of the events' own time, kept by
/// the statements that store and delete events, in their transactions (schema 23): a trend's
/// counts read a row per minute instead of an index entry per event, so their cost follows the
/// minutes of the range, not its events (30 days are 43,200 rows a name at most, however many
/// events they hold).
///
/// A row of `event_minutes` is (source, event, minute, events): `minute` is `timestamp / 60000`
/// (the minute the name-and-minute index groups by), so the rows know no time zone, and every
/// local day, week and month since 1973 is a run of whole minutes
/// (``SourceCalendar/wholeMinuteOffsetsSince``). An event is counted exactly when it is
/// stored with a name (a `track`, `page` or `screen` call):
/// - a write counts the events it stores (a resent message stores nothing and counts nothing; a
///   late one lands on its own minute);
/// - deletion and retention take off the events they delete (``removing(_:at:progress:)``), in their
///   transactions;
/// - the events stored before schema 23 are counted in the background, from the oldest (``runBatch(_:limit:)``),
///   and until that is done the trends count from the index.
///
/// As `definitions` (``DefinitionCounts``): SQLite's one writer adds to a row per key in place and
/// deletes a row that reaches zero. PostgreSQL's writes run in parallel, and a row that every
/// write updated would make each wait for the commit of the one before, so each write adds rows
/// of its own (summed when read) and the keys written are folded now and then
/// (``fold(_:in:)``); a deletion, retention or backfill replaces its keys' rows by their sum with
/// its change, in its transaction. A fold replaces only the rows it deleted, so folds, writes and
/// deletions in any order keep each key's sum.
enum EventMinutes {
    /// One row's key.
    struct Key: Hashable, Sendable, Comparable {
        @ExactText var source: String
        @ExactText var event: String
        var minute: Int64

        static func < (lhs: Key, rhs: Key) -> Bool {
            (lhs._source, lhs._event, lhs.minute) < (rhs._source, rhs._event, rhs.minute)
        }
    }

    /// The minute of an event's time as the table keys it (truncating, as `timestamp / 60000`).
    static func minute(of timestamp: Int64) -> Int64 { timestamp / 60_000 }

    /// SQLite's statement that adds to a key's row (source, event, minute, events).
    static let sqliteUpsert = """
        INSERT INTO event_minutes (source, event, minute, events) VALUES (?, ?, ?, ?) \
        ON CONFLICT (source, event, minute) DO UPDATE SET events = event_minutes.events + excluded.events
        """

    /// PostgreSQL's statement that replaces the rows of each bound key by one holding their sum
    /// plus the key's change (four arrays: sources, events, minutes, changes; each key once). The
    /// rows it deletes are the rows it sums: a row another write adds meanwhile is not among them
    /// and stays; a key whose sum is zero keeps no row.
    static let postgresReplace = """
        WITH changes AS (SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) \
        AS c(source, event, minute, events)), \
        gone AS (DELETE FROM event_minutes m USING changes c \
        WHERE m.source = c.source AND m.event = c.event AND m.minute = c.minute \
        RETURNING m.source, m.event, m.minute, m.events) \
        INSERT INTO event_minutes (source, event, minute, events) \
        SELECT source, event, minute, SUM(events) FROM \
        (SELECT source, event, minute, events FROM gone UNION ALL SELECT source, event, minute, events FROM changes) t \
        GROUP BY source, event, minute HAVING SUM(events) <> 0
        """

    /// Keys a PostgreSQL statement of ``postgresReplace`` takes at most.
    static let keysPerStatement = 5_000

    /// Applies `changes` (events added, or taken off when negative) in `transaction`.
    static func apply(_ changes: [Key: Int64], in transaction: any SQLTransaction, dialect: SQLDialect)
        async throws
    {
        let sorted = changes.filter { $0.value != 0 }.sorted { $0.key < $1.key }
        guard !sorted.isEmpty else { return }
        switch dialect {
        case .sqlite:
            for (key, events) in sorted {
                _ = try await transaction.query(
                    sqliteUpsert, [.text(key.source), .text(key.event), .int(key.minute), .int(events)])
            }
            let removals = sorted.filter { $0.value < 0 }
            for start in stride(from: 0, to: removals.count, by: 300) {
                var delete = SQLStatement(
                    dialect, "DELETE FROM event_minutes WHERE events <= 0 AND (source, event, minute) IN (VALUES ")
                for (offset, removal) in removals[start..<min(start + 300, removals.count)].enumerated() {
                    if offset > 0 { delete.append(", ") }
                    delete.bindTuple([.text(removal.key.source), .text(removal.key.event), .int(removal.key.minute)])
                }
                delete.append(")")
                _ = try await transaction.query(delete)
            }
        case .postgres:
            for start in stride(from: 0, to: sorted.count, by: keysPerStatement) {
                let part = sorted[start..<min(start + keysPerStatement, sorted.count)]
                _ = try await transaction.query(
                    postgresReplace,
                    [
                        .textArray(part.map(\.key.source)), .textArray(part.map(\.key.event)),
                        .intArray(part.map(\.key.minute)), .intArray(part.map(\.value)),
                    ])
            }
        }
    }

    /// Replaces the rows of each of `keys` by one holding their sum (PostgreSQL, where each write
    /// adds rows of its own), a transaction per ``keysPerStatement`` keys.
    static func fold(_ keys: [Key], in backend: any SQLBackend) async throws {
        let sorted = keys.sorted()
        for start in stride(from: 0, to: sorted.count, by: keysPerStatement) {
            let part = sorted[start..<min(start + keysPerStatement, sorted.count)]
            try await backend.write { transaction in
                _ = try await transaction.query(
                    postgresReplace,
                    [
                        .textArray(part.map(\.source)), .textArray(part.map(\.event)), .intArray(part.map(\.minute)),
                        .intArray(part.map { _ in 0 }),
                    ])
            }
        }
    }

    // MARK: Deletion and retention

    /// The changes that take deleted events off: `rows` are what a delete returned,
    /// ``SQLCollectorStorage/definedColumns`` from column `offset` on (seq, source, type, event,
    /// lifted, payload, timestamp). An event stored before schema 23 that the backfill has not
    /// counted yet is not taken off (the backfill, which takes turns with this through its row, no
    /// longer finds it).
    static func removing(_ rows: [SQLRow], at offset: Int, progress: BackfillProgress) -> [Key: Int64] {
        var changes: [Key: Int64] = [:]
        for row in rows {
            guard let seq = row[offset].int, progress.counts(seq), let source = row[offset + 1].text,
                let event = row[offset + 3].text, let timestamp = row[offset + 6].int
            else { continue }
            changes[Key(source: source, event: event, minute: minute(of: timestamp)), default: 0] -= 1
        }
        return changes
    }

    /// The changes that take deleted events off their values' rows (``ValueRollup``), as
    /// ``removing(_:at:progress:)`` reads `rows`: each event the rollup of a kept property counted
    /// (`progress`, ``ValueRollup/progress(in:dialect:sources:)``) is taken off its value's row.
    static func removingValues(
        _ rows: [SQLRow], at offset: Int, rollups: KeptProperties, progress: [ValueRollupKey: BackfillProgress]
    ) -> [Key: Int64] {
        var changes: [Key: Int64] = [:]
        guard !progress.isEmpty else { return changes }
        for row in rows {
            guard let seq = row[offset].int, let source = row[offset + 1].text, let event = row[offset + 3].text,
                let lifted = row[offset + 4].int, let payload = row[offset + 5].text,
                let timestamp = row[offset + 6].int
            else { continue }
            let kept = rollups.properties(of: source).filter {
                progress[ValueRollupKey(source: source, property: $0)]?.counts(seq) ?? false
            }
            guard !kept.isEmpty else { continue }
            let values = ValueRollup.values(of: kept, payload: payload, lifted: lifted)
            for (property, value) in zip(kept, values) {
                let key = Key(
                    source: ValueRollup.source(of: source, property: property, value: value), event: event,
                    minute: minute(of: timestamp))
                changes[key, default: 0] -= 1
            }
        }
        return changes
    }

    // MARK: Backfill

    /// The progress of the count of the events stored before schema 23, read in `transaction`
    /// and locked until it ends (PostgreSQL).
    static func progress(in transaction: any SQLTransaction, dialect: SQLDialect) async throws -> BackfillProgress {
        try await BackfillProgress.locked("event_minutes_backfill", in: transaction, dialect: dialect)
    }

    /// Counts the events stored before schema 23 whose seq is among the next `limit` seqs, in one
    /// transaction.
    /// - Returns: the progress after it.
    @discardableResult
    static func runBatch(_ backend: any SQLBackend, limit: Int) async throws -> BackfillProgress {
        let dialect = backend.dialect
        return try await backend.write { transaction in
            var progress = try await progress(in: transaction, dialect: dialect)
            guard !progress.isComplete else { return progress }
            let through = min(progress.last, progress.done + Int64(max(limit, 1)))
            var select = SQLStatement(
                dialect,
                "SELECT source, event, timestamp / 60000, COUNT(*) FROM events WHERE event IS NOT NULL AND seq > ")
            select.bind(.int(progress.done))
            select.append(" AND seq <= ")
            select.bind(.int(through))
            select.append(" GROUP BY 1, 2, 3")
            var changes: [Key: Int64] = [:]
            for row in try await transaction.query(select) {
                guard let source = row[0].text, let event = row[1].text, let minute = row[2].int,
                    let count = row[3].int
                else { continue }
                changes[Key(source: source, event: event, minute: minute)] = count
            }
            try await apply(changes, in: transaction, dialect: dialect)
            progress.done = through
            var update = SQLStatement(dialect, "UPDATE event_minutes_backfill SET done = ")
            update.bind(.int(progress.done))
            _ = try await transaction.query(update)
            return progress
        }
    }
}

/// How far the count of the events stored before a counting table existed got: `done` (a seq) and
/// where it ends (`last`: the newest event when the upgrade ran; every later event was counted as
/// it was stored).
struct BackfillProgress: Sendable, Hashable {
    var done: Int64
    var last: Int64

    /// Whether every event stored before the upgrade is counted.
    var isComplete: Bool { done >= last }

    /// Whether the event with `seq` is counted.
    func counts(_ seq: Int64) -> Bool { seq > last || seq <= done }

    /// The progress that `table` (a row of `done` and `last`) holds, read in `transaction` and
    /// locked until it ends (PostgreSQL).
    static func locked(_ table: String, in transaction: any SQLTransaction, dialect: SQLDialect) async throws
        -> BackfillProgress
    {
        try BackfillProgress(
            try await transaction.query("SELECT done, last FROM \(table)" + dialect.lockingRead, []).first, of: table)
    }

    /// The progress that `table` holds now.
    static func read(_ table: String, in backend: any SQLBackend) async throws -> BackfillProgress {
        try BackfillProgress(try await backend.query("SELECT done, last FROM \(table)", []).first, of: table)
    }
}

extension BackfillProgress {
    /// The progress in `row` (done, last), read from `table`.
    init(_ row: SQLRow?, of table: String) throws {
        guard let row, let done = row[0].int, let last = row[1].int else {
            throw StorageError(code: .corruptRow, message: "\(table) has no row")
        }
        self.init(done: done, last: last)
    }
}

/// Reads of `event_minutes` (``EventMinutes``): whether they count every stored event yet, and a
/// range's events per interval. One per storage, shared by its insight engine and its overview.
final class EventMinutesReader: Sendable {
    let backend: any SQLBackend
    /// Whether the rows were found to count every stored event (it never becomes false again).
    private let counted = Locked(false)

    init(backend: any SQLBackend) { self.backend = backend }

    /// Whether the events stored before the events per minute were kept are all counted (false
    /// while ``SQLCollectorStorage/backfillEventMinutes(limit:)`` counts them after an upgrade).
    func complete() async throws -> Bool {
        if counted.value { return true }
        let complete = try await BackfillProgress.read("event_minutes_backfill", in: backend).isComplete
        if complete { counted.withLock { $0 = true } }
        return complete
    }

    /// The events of `event` in `minutes` (minutes since 1970, whose intervals begin on whole
    /// minutes) of each of `sources` (a source and its value sources, ``ValueRollup``) per
    /// interval of `calendar`, from their rows per minute.
    ///
    /// PostgreSQL adds the minutes up per interval itself (each interval's first minute a
    /// threshold of `width_bucket`), so a row an interval crosses the connection rather than a row
    /// a minute; SQLite, in the process, hands over its minutes.
    func counts(
        sources: [String], event: String, minutes: Range<Int64>, calendar: SourceCalendar,
        interval: AnalyticsInterval
    ) async throws -> [(source: String, index: Int64, count: Int64)] {
        guard !sources.isEmpty else { return [] }
        let dialect = backend.dialect
        // One source: its name is not read back with every row.
        let one = sources.count == 1 ? sources.first : nil
        var statement = SQLStatement(dialect, one == nil ? "SELECT source, " : "SELECT NULL, ")
        var indexes: [Int64] = []
        if dialect == .postgres {
            let first = calendar.index(of: minutes.lowerBound * 60_000, interval)
            indexes = Array(first...max(first, calendar.index(of: (minutes.upperBound - 1) * 60_000, interval)))
            let thresholds = indexes.map { SourceCalendar.floorDivide(calendar.start(of: $0, interval), 60_000) }
            statement.append("width_bucket(minute, ")
            statement.bind(.intArray(thresholds))
            statement.append("::bigint[])")
        } else {
            statement.append("minute")
        }
        statement.append(" AS bucket, CAST(SUM(events) AS BIGINT) FROM event_minutes WHERE source IN ")
        statement.bindTuple(sources.sorted().map { .text($0) })
        statement.append(" AND event = ")
        statement.bind(.text(event))
        statement.append(" AND minute >= ")
        statement.bind(.int(minutes.lowerBound))
        statement.append(" AND minute < ")
        statement.bind(.int(minutes.upperBound))
        statement.append(one == nil ? " GROUP BY source, bucket" : " GROUP BY bucket")
        return try await backend.query(statement).compactMap { row in
            guard let source = one ?? row[0].text, let bucket = row[1].int, let count = row[2].int else { return nil }
            guard dialect == .postgres else {
                return (source, calendar.index(of: bucket * 60_000, interval), count)
            }
            // Bucket k holds the minutes from the k-th threshold up to the next.
            guard bucket >= 1, bucket <= indexes.count else { return nil }
            return (source, indexes[Int(bucket) - 1], count)
        }
    }
}
