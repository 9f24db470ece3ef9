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
        async let partial = dailyPeopleBuilding(source: source)
        let people = try await dailyPeople(sources: [source], event: event, days: days)[source] ?? DailyPeople()
        return DailyPeopleRead(people: people, partial: try await partial)
    }

    /// The people who did `event` on each local day of `days`, merges resolved, for each of
    /// `sources` that holds any (a source and its value sources, ``ValueRollup``).
    func dailyPeople(sources: [String], event: String, days: ClosedRange<Int64>) async throws
        -> [String: DailyPeople]
    {
        guard !sources.isEmpty else { return [:] }
        var statement = SQLStatement(dialect, "SELECT source, day, chunk, bits FROM daily_people WHERE source IN ")
        statement.bindTuple(sources.sorted().map { .text($0) })
        statement.append(" AND event = ")
        statement.bind(.text(event))
        statement.append(" AND day BETWEEN ")
        statement.bind(.int(days.lowerBound))
        statement.append(" AND ")
        statement.bind(.int(days.upperBound))
        async let merges = mergedPeople()
        var sides: [String: [Int64: DailyPeopleRollup.Sides]] = [:]
        for row in try await backend.query(statement.sql, statement.binds, bytesAt: [3]) {
            guard let source = row[0].text, let day = row[1].int, let chunk = row[2].int, let bits = row[3].bytes
            else { continue }
            try sides[source, default: [:]][day, default: DailyPeopleRollup.Sides()].add(chunk: chunk, bits: bits)
        }
        let merged = try await merges
        return sides.mapValues { days in
            DailyPeople(days.mapValues { merged.people(users: $0.users, anonymous: $0.anonymous) })
        }
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
                // Whatever any writer remembers having set is gone.
                _ = try await transaction.query("UPDATE daily_people_changes SET changes = changes + 1", [])
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
    /// the deleting transaction, after the events are deleted, and counts a change for the
    /// backfill (which then reads its slice again rather than put back what was deleted).
    ///
    /// A person keeps their bit for a day when an event of theirs with that name is left on it:
    /// an event is deleted for its anonymous id too, so a signed-in user's event on a deleted
    /// device goes while the user's other events of the day stay. Each (event, day, person) the
    /// deletion touched is looked up once in the name-and-minute index.
    static func clearDailyPeople(
        source: String, events: [DeletedEvent], calendar: SourceCalendar, in transaction: any SQLTransaction,
        dialect: SQLDialect
    ) async throws {
        _ = try await transaction.query("UPDATE daily_people_changes SET changes = changes + 1", [])
        var lookup = DayLookup(calendar)
        // Each (event, day, person) the deletion touched, with the values of kept properties it did.
        var pairs: [PersonOnDay: Set<PropertyValue>] = [:]
        for event in events where event.personKey != 0 {
            let key = DailyPeopleRollup.Key(source: source, event: event.event, day: lookup.day(of: event.timestamp))
            pairs[PersonOnDay(key: key, personKey: event.personKey), default: []].formUnion(
                event.values.map { PropertyValue(property: $0.property, value: $0.value) })
        }
        var cleared: [DailyPeopleRollup.Key: DailyPeopleRollup.Sides] = [:]
        for (pair, values) in pairs.sorted(by: {
            ($0.key.key.event, $0.key.key.day, $0.key.personKey) < ($1.key.key.event, $1.key.key.day, $1.key.personKey)
        }) {
            let first = calendar.start(ofDay: pair.key.day) / 60_000
            let end = calendar.start(ofDay: pair.key.day + 1) / 60_000
            // Without values, whether any event is left; with them, which values the ones left have.
            var left = SQLStatement(
                dialect,
                "SELECT \(values.isEmpty ? "1" : "lifted, payload") FROM \(dialect.eventsByName) WHERE source = ")
            left.bind(.text(source))
            left.append(" AND event = ")
            left.bind(.text(pair.key.event))
            left.append(" AND timestamp / 60000 >= ")
            left.bind(.int(first))
            left.append(" AND timestamp / 60000 < ")
            left.bind(.int(end))
            left.append(" AND person_key = ")
            left.bind(.int(pair.personKey))
            if values.isEmpty { left.append(" LIMIT 1") }
            let rows = try await transaction.query(left)
            var gone: [DailyPeopleRollup.Key] = []
            if rows.isEmpty { gone.append(pair.key) }
            if !values.isEmpty {
                let properties = Array(Set(values.map(\.property))).sorted()
                var kept = Set<PropertyValue>()
                for row in rows {
                    guard let lifted = row[0].int, let payload = row[1].text else { continue }
                    for (property, value) in zip(
                        properties, ValueRollup.values(of: properties, payload: payload, lifted: lifted))
                    {
                        kept.insert(PropertyValue(property: property, value: value))
                    }
                }
                for entry in values.subtracting(kept) {
                    gone.append(
                        DailyPeopleRollup.Key(
                            source: ValueRollup.source(of: source, property: entry.property, value: entry.value),
                            event: pair.key.event, day: pair.key.day))
                }
            }
            for key in gone {
                cleared[key, default: DailyPeopleRollup.Sides()].insert(
                    abs(pair.personKey), anonymous: pair.personKey < 0)
            }
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
            // The rows read are the rows deleted (one statement), and on PostgreSQL no fold of
            // the day commits in between (it takes the same lock).
            if let lock = dialect.lockDailyPeopleDay {
                _ = try await transaction.query(lock, [.text(key.source), .text(key.event), .int(key.day)])
            }
            var left = PersonSet.Chunk()
            let rows = try await transaction.query("DELETE" + match.sql + " RETURNING bits", match.binds, bytesAt: [0])
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
            guard !left.isEmpty else { continue }
            _ = try await transaction.query(
                dialect.dailyPeopleAdd,
                [
                    .text(key.source), .text(key.event), .int(key.day), .int(chunk),
                    .bytes(PersonChunkEncoding.encode(left)),
                ])
        }
    }

    private struct PersonOnDay: Hashable {
        var key: DailyPeopleRollup.Key
        var personKey: Int64
    }

    private struct PropertyValue: Hashable {
        @ExactText var property: String
        var value: ValueRollup.Value
    }

    /// A deleted event as the daily people see it: its name, time, person (``PersonKeys``) and
    /// the values of the properties its source keeps (``ValueRollup``).
    struct DeletedEvent {
        var event: String
        var timestamp: Int64
        var personKey: Int64
        var values: [(property: String, value: ValueRollup.Value)] = []
    }

    /// Deletes `source`'s daily people (and its values', ``ValueRollup``) before local day `day`
    /// (retention, which deletes events by whole local days), and counts a change for the backfill.
    func deleteDailyPeople(source: String, before day: Int64) async throws {
        // The source's and its values' (``ValueRollup``).
        let prefix = ValueRollup.prefix(of: source)
        var old = SQLStatement(dialect, " FROM daily_people WHERE (source = ")
        old.bind(.text(source))
        old.append(" OR (source >= ")
        old.bind(.text(prefix))
        old.append(" AND source < ")
        old.bind(.text(ValueRollup.end(of: prefix)))
        old.append(")) AND day < ")
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
