import Logging
import TouchpointCore

/// What an insight reads of the daily people (``DailyPeopleRollup``): the people of each day,
/// and whether the rollup of the source is still being built.
struct DailyPeopleRead: Sendable {
    /// People per local day, merges resolved.
    var people: DailyPeople
    /// Whether the source's rollup is still being built from stored events (an upgrade, a new
    /// time zone): the answer counts only the events built so far and those stored since.
    var partial: Bool
}

extension SQLCollectorStorage {
    // MARK: Reading

    /// The people who did `event` on each local day of `days` in `source`, merges resolved.
    func dailyPeople(source: String, event: String, days: ClosedRange<Int64>) async throws -> DailyPeopleRead {
        var statement = SQLStatement(dialect, "SELECT day, chunk, bits FROM daily_people WHERE source = ")
        statement.bind(.text(source))
        statement.append(" AND event = ")
        statement.bind(.text(event))
        statement.append(" AND day BETWEEN ")
        statement.bind(.int(days.lowerBound))
        statement.append(" AND ")
        statement.bind(.int(days.upperBound))
        async let merges = mergedPeople()
        async let partial = dailyPeopleBuilding(source: source)
        var sides: [Int64: DailyPeopleRollup.Sides] = [:]
        for row in try await backend.query(statement.sql, statement.binds, bytesAt: [2]) {
            guard let day = row[0].int, let chunk = row[1].int, let bits = row[2].bytes else { continue }
            try sides[day, default: DailyPeopleRollup.Sides()].add(chunk: chunk, bits: bits)
        }
        let merged = try await merges
        let people = DailyPeople(sides.mapValues { merged.people(users: $0.users, anonymous: $0.anonymous) })
        return DailyPeopleRead(people: people, partial: try await partial)
    }

    /// Everyone who did `event` in `source` on a local day before `day`, merges resolved.
    func people(source: String, event: String, before day: Int64) async throws -> PersonSet {
        var statement = SQLStatement(dialect, "SELECT chunk, bits FROM daily_people WHERE source = ")
        statement.bind(.text(source))
        statement.append(" AND event = ")
        statement.bind(.text(event))
        statement.append(" AND day < ")
        statement.bind(.int(day))
        async let merges = mergedPeople()
        var sides = DailyPeopleRollup.Sides()
        for row in try await backend.query(statement.sql, statement.binds, bytesAt: [1]) {
            guard let chunk = row[0].int, let bits = row[1].bytes else { continue }
            try sides.add(chunk: chunk, bits: bits)
        }
        return try await merges.people(users: sides.users, anonymous: sides.anonymous)
    }

    /// Every merge of an anonymous id into a user, in numbers (``PersonKeys``).
    func mergedPeople() async throws -> MergedPeople {
        var merged = MergedPeople()
        for row in try await backend.query("SELECT anonymous_key, user_key FROM person_merges", []) {
            guard let anonymous = row[0].int, let user = row[1].int else { continue }
            merged.add(anonymous: -anonymous, user: user)
        }
        return merged
    }

    /// Whether `source`'s daily people are still being built from stored events.
    func dailyPeopleBuilding(source: String) async throws -> Bool {
        var statement = SQLStatement(dialect, "SELECT complete FROM daily_people_state WHERE source = ")
        statement.bind(.text(source))
        guard let complete = try await backend.query(statement).first?.first?.int else { return false }
        return complete == 0
    }

    // MARK: Preparing

    /// Sets each source's calendar for the writer, and makes the daily people of each source
    /// whose time zone is new (a source not seen before, the upgrade to schema 20, a changed
    /// zone) start over: its rows are deleted and built again from the stored events in the
    /// background (``DailyPeopleBackfill``), which this starts when anything is left to build.
    /// Call before the collector takes events.
    /// - Parameter build: whether to start building now (tests start it themselves).
    func prepareDailyPeople(calendars: [String: SourceCalendar], logger: Logger, build: Bool = true) async throws {
        let sources = calendars.sorted { $0.key < $1.key }
        let dialect = self.dialect
        let writerCalendars = self.calendars
        try await backend.write { transaction in
            for (source, calendar) in sources {
                var read = SQLStatement(dialect, "SELECT time_zone FROM daily_people_state WHERE source = ")
                read.bind(.text(source))
                let zone = try await transaction.query(read).first?.first?.text
                writerCalendars.set(source, calendar)
                guard zone != calendar.identifier else { continue }
                if let zone {
                    logger.notice(
                        "a source's time zone changed: its daily people are built again in the background",
                        metadata: ["source": "\(source)", "from": "\(zone)", "to": "\(calendar.identifier)"])
                }
                var delete = SQLStatement(dialect, "DELETE FROM daily_people WHERE source = ")
                delete.bind(.text(source))
                _ = try await transaction.query(delete)
                let newest =
                    try await transaction.query("SELECT COALESCE(MAX(seq), 0) FROM events", []).first?.first?
                    .int ?? 0
                var state = SQLStatement(dialect, "DELETE FROM daily_people_state WHERE source = ")
                state.bind(.text(source))
                _ = try await transaction.query(state)
                var insert = SQLStatement(
                    dialect,
                    "INSERT INTO daily_people_state (source, time_zone, rebuild_through, complete) VALUES ")
                insert.bindTuple([.text(source), .text(calendar.identifier), .int(newest), .int(newest == 0 ? 1 : 0)])
                _ = try await transaction.query(insert)
            }
        }
        if build { backfill.start() }
    }

    // MARK: Deletion and retention

    /// Clears the bits of deleted events (each `(event, timestamp, person_key)` of `source`) in
    /// the deleting transaction, and counts a change for the backfill (which then reads its slice
    /// again rather than put back what was deleted).
    static func clearDailyPeople(
        source: String, events: [(event: String, timestamp: Int64, personKey: Int64)], calendar: SourceCalendar,
        in transaction: any SQLTransaction, dialect: SQLDialect
    ) async throws {
        _ = try await transaction.query("UPDATE daily_people_changes SET changes = changes + 1", [])
        var lookup = DayLookup(calendar)
        var cleared: [DailyPeopleRollup.Key: DailyPeopleRollup.Sides] = [:]
        for event in events where event.personKey != 0 {
            let key = DailyPeopleRollup.Key(source: source, event: event.event, day: lookup.day(of: event.timestamp))
            cleared[key, default: DailyPeopleRollup.Sides()].insert(
                abs(event.personKey), anonymous: event.personKey < 0)
        }
        for (key, chunk, gone) in DailyPeopleRollup.rows(cleared) {
            guard let gone = PersonChunkEncoding.decode(gone) else { continue }
            var match = SQLStatement(dialect, " FROM daily_people WHERE source = ")
            match.bind(.text(key.source))
            match.append(" AND event = ")
            match.bind(.text(key.event))
            match.append(" AND day = ")
            match.bind(.int(key.day))
            match.append(" AND chunk = ")
            match.bind(.int(chunk))
            var left = PersonSet.Chunk()
            let rows = try await transaction.query("SELECT bits" + match.sql, match.binds, bytesAt: [0])
            for row in rows {
                guard let bits = row[0].bytes, let stored = PersonChunkEncoding.decode(bits) else {
                    throw StorageError(
                        code: .corruptRow,
                        message:
                            "a daily_people row of \(key.event) holds bytes that are not a chunk of people: the database was changed outside the collector"
                    )
                }
                left.formUnion(stored)
            }
            guard !rows.isEmpty else { continue }
            for offset in gone.offsets { left.remove(offset) }
            _ = try await transaction.query("DELETE" + match.sql, match.binds)
            guard !left.isEmpty else { continue }
            _ = try await transaction.query(
                dialect.dailyPeopleAdd,
                [
                    .text(key.source), .text(key.event), .int(key.day), .int(chunk),
                    .bytes(PersonChunkEncoding.encode(left)),
                ])
        }
    }

    /// Deletes `source`'s daily people before local day `day` (retention, which deletes events by
    /// whole local days), and counts a change for the backfill.
    func deleteDailyPeople(source: String, before day: Int64) async throws {
        var old = SQLStatement(dialect, " FROM daily_people WHERE source = ")
        old.bind(.text(source))
        old.append(" AND day < ")
        old.bind(.int(day))
        // Most passes find nothing: they neither write nor make the writer forget.
        guard try await !backend.query("SELECT 1" + old.sql + " LIMIT 1", old.binds).isEmpty else { return }
        let delete = (sql: "DELETE" + old.sql, binds: old.binds)
        let writer = self.writer
        try await backend.write { transaction in
            _ = try await transaction.query("UPDATE daily_people_changes SET changes = changes + 1", [])
            _ = try await transaction.query(delete.sql, delete.binds)
            writer.forgetDailyPeople()
        }
    }

    func forgetDailyPeople() { writer.forgetDailyPeople() }

    /// The count of deletions and retention passes that took people out of the rollup, read so
    /// that none commits before the transaction does.
    static func dailyPeopleChanges(in transaction: any SQLTransaction, dialect: SQLDialect) async throws -> Int64 {
        try await transaction.query("SELECT changes FROM daily_people_changes" + dialect.lockingRead, []).first?
            .first?.int ?? 0
    }
}
