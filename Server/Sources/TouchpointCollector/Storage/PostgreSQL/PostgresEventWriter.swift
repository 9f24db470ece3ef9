import Logging
import PostgresNIO
import TouchpointCore

/// PostgreSQL's event writer: each request stored on its own, in one prepared statement, in
/// parallel with the others on the pool's connections.
///
/// Several collectors may write to one database at once, so PostgreSQL keeps its unique indexes
/// on `(source, message_id)` and `(source, session_id)`: they are what makes the writers agree on
/// which copy of a message was first and on one row per session. The statement inserts the new
/// events, adds them to their sessions, profiles and the source's counts, and records the
/// request's identity links and people's numbers (``Insert``). Each write adds a row of its own
/// to `source_counts` (a row that every write updated would make each wait for the commit of the
/// one before); a source's rows are folded into one every ``SourceCounts/foldEvery`` writes. The
/// definitions (``DefinitionCounts``), the arrivals per minute (``ArrivalCounts``) and the events
/// per minute (``EventMinutes``) likewise.
/// Contexts stay inline: rows that every write updates would make the writes wait for each other.
final class PostgresEventWriter: EventWriter {
    let backend: PostgresBackend
    /// Writes so far (the counts are folded every ``SourceCounts/foldEvery``).
    private let writes = Locked(0)
    /// Where each source's days begin.
    let calendars: SourceCalendars
    /// The people counted on recent days, by their ids' hashes.
    let dailyPeople = KnownDailyIDs()
    /// The days written to since their rows were last folded.
    private let unfolded = Locked(Set<DailyPeopleRollup.Key>())
    /// The minutes written to since their rows were last folded (``EventMinutes``).
    private let unfoldedMinutes = Locked(Set<EventMinutes.Key>())

    init(backend: PostgresBackend, calendars: SourceCalendars) {
        self.backend = backend
        self.calendars = calendars
    }

    /// One event to store: its payload without the members its columns hold (``StoredPayload``),
    /// its person hashed, both on the request's task.
    struct Row: EventRow, Sendable {
        let source: String
        let message: IngestMessage
        let stored: StoredPayload.Compacted
        let person: (person: PersonKeys.Person, isUser: Bool)?
        /// What the message adds to its source's definitions (nil: nothing).
        let definitions: DefinitionCounts.Shape?

        init(source: String, message: IngestMessage) {
            self.source = source
            self.message = message
            stored = StoredPayload.compact(
                message.payload, columns: StoredPayload.Columns(message), shareContext: false,
                unwrapProperties: false)
            person = PersonKeys.person(source: source, message: message)
            definitions = DefinitionCounts.Shape(
                source: source, message: message, keys: PropertyKeyReader.definedKeys(of: message))
        }
    }

    func insert(_ messages: [IngestMessage], source: String) async throws -> [Bool] {
        guard !messages.isEmpty else { return [] }
        let unique = FirstCopies([messages.map { Row(source: source, message: $0) }])
        let stored = unique.flags(stored: try await write(unique.rows))[0]
        // Each write added a row to the source's counts: fold them now and then. A fold that
        // fails (a deadlock with another) is tried again by a later one or by the next read.
        let written = writes.withLock {
            $0 += 1
            return $0
        }
        if written % SourceCounts.foldEvery == 0 {
            try? await SourceCounts.fold(source: source, in: backend)
            try? await DefinitionCounts.fold(source: source, in: backend)
            try? await ArrivalCounts.fold(
                source: source, now: messages.map(\.receivedAt).max() ?? 0, in: backend)
            try? await foldDailyPeople()
            try? await foldEventMinutes()
        }
        return stored
    }

    /// Stores rows with unique (source, messageId) and their sessions atomically, in one statement
    /// with a data-modifying WITH.
    ///
    /// Two collectors inserting the same batch (a retry that reached both) lock its keys in the same
    /// order and cannot deadlock; only overlapping batches in different orders could, and then
    /// PostgreSQL aborts one statement, which `PostgresBackend` runs again (and past its retries
    /// the sender gets a 5xx and retries).
    /// - Returns: per row, whether it was stored now.
    private func write(_ rows: [Row]) async throws -> [Bool] {
        guard !rows.isEmpty else { return [] }
        let all = Array(repeating: true, count: rows.count)
        let links = IdentityLink.links(of: rows, stored: all)
        let people = PersonKeys.people(of: rows, stored: all, links: links)
        let daily = DailyRows(rows, days: DailyPeopleDays(calendars), known: dailyPeople, rollups: calendars.rollups)
        let inserted = try await backend.writePrepared(Insert(rows: rows, links: links, people: people, daily: daily))
        var stored = Set<MessageIdentity>(minimumCapacity: rows.count)
        for (source, messageId, _) in inserted {
            stored.insert(MessageIdentity(source: source, messageId: messageId))
        }
        // Committed: who was counted is known from now on, at the count of changes the
        // statement read (any inserted row carries it).
        // Only the stored events' people: a resent message id stores nothing and adds no bit.
        if let changes = inserted.first?.2 {
            let added = zip(daily.people, daily.messages).filter { stored.contains($1) }.map(\.0)
            dailyPeople.remember(added, changes: changes)
            unfolded.withLock { $0.formUnion(added.map(\.key)) }
        }
        let minutes =
            rows.compactMap { row -> EventMinutes.Key? in
                guard stored.contains(row.identity), let name = row.message.name else { return nil }
                return EventMinutes.Key(
                    source: row.source, event: name, minute: EventMinutes.minute(of: row.message.timestamp))
            } + daily.valueMinutes.filter { stored.contains($0.message) }.map(\.key)
        unfoldedMinutes.withLock { $0.formUnion(minutes) }
        return rows.map { stored.contains($0.identity) }
    }

    /// PostgreSQL finds a session's events through the index on (source, session_id, seq).
    func appendSessions(source: String, _ sessionIds: [String], to statement: inout SQLStatement) {
        statement.append("source = ")
        statement.bind(.text(source))
        statement.append(" AND session_id IN ")
        statement.bindTuple(sessionIds.map { .text($0) })
    }

    /// Nothing to forget: the statement looks every person up.
    func forgetPeople() {}

    /// The statement checks the count of changes itself; forgetting saves it a write of all.
    func forgetDailyPeople() { dailyPeople.forgetAll() }

    /// Merges the rows the writes added to each day written since the last fold into one per
    /// chunk (``DailyPeopleRollup``), a day per transaction: the rows read together are deleted
    /// and their union inserted. A write's rows added meanwhile are not seen, and stay. A day
    /// whose fold fails is kept for the next fold (a past day is seldom written again, so nothing
    /// else would fold it), and the days after it are folded all the same; the first failure is
    /// thrown at the end.
    func foldDailyPeople() async throws {
        let days = unfolded.withLock { days in
            defer { days = [] }
            return days
        }
        var failure: (any Error)?
        for key in days.sorted(by: { ($0.source, $0.event, $0.day) < ($1.source, $1.event, $1.day) }) {
            do {
                try await foldDailyPeople(key)
            } catch {
                unfolded.withLock { _ = $0.insert(key) }
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
    }

    /// Folds one day's rows of ``foldDailyPeople()``.
    private func foldDailyPeople(_ key: DailyPeopleRollup.Key) async throws {
        try await backend.write { transaction in
            if let lock = SQLDialect.postgres.lockDailyPeopleDay {
                _ = try await transaction.query(lock, [.text(key.source), .text(key.event), .int(key.day)])
            }
            let rows = try await transaction.query(
                "DELETE FROM daily_people WHERE source = $1 AND event = $2 AND day = $3 RETURNING chunk, bits",
                [.text(key.source), .text(key.event), .int(key.day)])
            var sides = DailyPeopleRollup.Sides()
            for row in rows {
                guard let chunk = row[0].int, let bits = row[1].bytes else { continue }
                try sides.add(chunk: chunk, bits: bits)
            }
            for row in sides.rows {
                _ = try await transaction.query(
                    SQLDialect.postgres.dailyPeopleAdd,
                    [.text(key.source), .text(key.event), .int(key.day), .int(row.chunk), .bytes(row.bits)])
            }
        }
    }

    /// Folds the rows the writes added to each minute written since the last fold into one per
    /// key (``EventMinutes``). When a fold fails its keys stay as they are (summed when read) and
    /// are kept for the next fold (a past minute is seldom written again, so nothing else would
    /// fold it; folding a key twice changes nothing).
    func foldEventMinutes() async throws {
        let keys = unfoldedMinutes.withLock { keys in
            defer { keys = [] }
            return keys
        }
        do {
            try await EventMinutes.fold(Array(keys), in: backend)
        } catch {
            unfoldedMinutes.withLock { $0.formUnion(keys) }
            throw error
        }
    }

    /// The events of a write as the daily people see them: each one's day and person, and
    /// whether the rollup must be given it (its person is not known counted that day).
    struct DailyRows: Sendable {
        var sources: [String] = []
        var events: [String] = []
        var days: [Int64] = []
        var people: [(key: DailyPeopleRollup.Key, hash: UInt64)] = []
        var ids: [String] = []
        var sides: [Int64] = []
        var needed: [Bool] = []
        /// Each event's message id (the statement joins the events it stored) and identity.
        var messageIds: [String] = []
        var messages: [MessageIdentity] = []
        /// The count of changes the known people hold for (nil: every one is needed).
        var changes: Int64?

        /// Each entry's own source, which the statement joins the stored events and people on
        /// (a value's entry adds to its value source, ``ValueRollup``).
        var joins: [String] = []
        /// The values' rows per minute each event adds to, with its source and message id (only
        /// the events the statement stored add).
        var valueMinutes: [(key: EventMinutes.Key, source: String, message: MessageIdentity)] = []

        init(
            _ rows: [PostgresEventWriter.Row], days lookup: DailyPeopleDays, known: KnownDailyIDs,
            rollups: KeptProperties
        ) {
            var lookup = lookup
            let keptBySource = rollups.bySource
            for row in rows {
                guard let event = row.message.name else { continue }
                var valueSources: [String] = []
                if let kept = keptBySource[row.source] {
                    let values = ValueRollup.values(of: kept, payload: row.message.payload, lifted: 0)
                    valueSources = zip(kept, values).map {
                        ValueRollup.source(of: row.source, property: $0, value: $1)
                    }
                    let minute = EventMinutes.minute(of: row.message.timestamp)
                    for valueSource in valueSources {
                        valueMinutes.append(
                            (
                                EventMinutes.Key(source: valueSource, event: event, minute: minute), row.source,
                                row.identity
                            ))
                    }
                }
                guard let person = row.person else { continue }
                let day = lookup.day(of: row.message.timestamp, source: row.source)
                for source in [row.source] + valueSources {
                    let key = DailyPeopleRollup.Key(source: source, event: event, day: day)
                    sources.append(source)
                    joins.append(row.source)
                    events.append(event)
                    days.append(day)
                    ids.append(person.person.id)
                    sides.append(person.isUser ? 0 : 1)
                    messageIds.append(row.message.messageId)
                    messages.append(row.identity)
                    people.append((key, known.hash(person.person.id, anonymous: !person.isUser)))
                }
            }
            (needed, changes) = known.unknown(people)
        }
    }

    /// Nothing measured: the writes run in parallel, each timed by the request that made it.
    func metrics() -> String { "" }

    /// Nothing runs in the background.
    func close() async {}

    /// The ingest statement: the same SQL whatever the rows (their columns are bound as arrays), so
    /// it is prepared once per connection and PostgreSQL parses and plans it once, not for every
    /// request (that was about a tenth of PostgreSQL's time per event).
    struct Insert: PostgresPreparedStatement {
        typealias Row = (String, String, Int64)
        static let name = "touchpoint_insert_events"
        let rows: [PostgresEventWriter.Row]
        let links: [IdentityLink]
        let people: [PersonKeys.Person]
        let daily: DailyRows

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBackend.bindings(
                Self.eventColumns(rows) + Self.linkColumns(links)
                    + [.textArray(people.map(\.source)), .textArray(people.map(\.id))]
                    + [
                        .textArray(daily.sources), .textArray(daily.events), .intArray(daily.days),
                        .textArray(daily.ids), .intArray(daily.sides),
                    ])
            bindings.append(daily.needed)
            bindings.append(daily.changes ?? -1)
            bindings.append(daily.messageIds)
            let definitions = Self.definitionColumns(rows)
            bindings.append(definitions.ids)
            bindings.append(definitions.names)
            bindings.append(definitions.types)
            bindings.append(daily.joins)
            bindings.append(daily.valueMinutes.map(\.key.source))
            bindings.append(daily.valueMinutes.map(\.source))
            bindings.append(daily.valueMinutes.map(\.message.messageId))
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode((String, String, Int64).self) }

        /// The columns the statement inserts: every column of PostgreSQL's table but `seq` and
        /// `context_id` (contexts stay inline).
        static let columns = EventsTable.insert(in: .postgres, leaving: [.contextId])

        /// Those bound as arrays, in order from `$1`: all but `person_key`, which the statement
        /// looks up (``personNumbers``).
        static let bound = columns.filter { $0 != .personKey }

        /// The rows' values of `column`, as the statement binds them.
        enum Values {
            case text([String?])
            case integer([Int64])
            case optionalInteger([Int64?])
        }

        /// The rows' values of each bound column, in order.
        static func values(of column: EventColumn, in rows: [PostgresEventWriter.Row]) -> Values {
            switch column {
            case .source: .text(rows.map(\.source))
            case .messageId: .text(rows.map(\.message.messageId))
            case .type: .text(rows.map(\.message.type.rawValue))
            case .event: .text(rows.map(\.message.name))
            case .userId: .text(rows.map(\.message.userId))
            case .anonymousId: .text(rows.map(\.message.anonymousId))
            case .sessionId: .text(rows.map(\.message.sessionId))
            case .timestamp: .integer(rows.map(\.message.timestamp))
            case .originalTimestamp: .text(rows.map(\.message.originalTimestamp))
            case .sentAt: .optionalInteger(rows.map(\.message.sentAt))
            case .receivedAt: .integer(rows.map(\.message.receivedAt))
            case .payload: .text(rows.map(\.stored.payload))
            case .lifted: .integer(rows.map(\.stored.lifted.rawValue))
            case .seq, .sessionKey, .personKey, .contextId: preconditionFailure("\(column.name) is not bound")
            }
        }

        /// The rows' columns as the arrays ``sql`` binds, from `$1`, in the order of ``bound``: an
        /// integer column that allows no NULL as integers, any other as text, in which empty text
        /// stands for NULL (the decoder never produces empty ids or names, and ``selected(_:)``
        /// reads it back so).
        static func eventColumns(_ rows: [PostgresEventWriter.Row]) -> [SQLValue] {
            bound.map { column in
                switch values(of: column, in: rows) {
                case .text(let texts): .textArray(texts.map { $0 ?? "" })
                case .integer(let integers): .intArray(integers)
                case .optionalInteger(let integers): .textArray(integers.map { $0.map(String.init) ?? "" })
                }
            }
        }

        /// What the statement inserts in `column`, from the bound arrays (`batch`).
        static func selected(_ column: EventColumn) -> String {
            let bound = "batch.\(column.name)"
            switch column {
            case .personKey:
                return "CASE WHEN batch.user_id <> '' THEN k.person_key ELSE -k.person_key END"
            case _ where !column.isNullable:
                return bound
            case _ where column.value == .integer:
                return "NULLIF(\(bound), '')::\(column.type(in: .postgres) ?? "bigint")"
            default:
                return "NULLIF(\(bound), '')"
            }
        }

        /// `$first, $(first + 1), …`, `count` of them.
        private static func placeholders(from first: Int, count: Int) -> String {
            (first..<first + count).map { "$\($0)" }.joined(separator: ", ")
        }

        /// The identity links as the four arrays ``sql`` binds after the columns: source,
        /// anonymous id, user id, time of the merge.
        static func linkColumns(_ links: [IdentityLink]) -> [SQLValue] {
            [
                .textArray(links.map(\.source)), .textArray(links.map(\.anonymousId)),
                .textArray(links.map(\.userId)), .intArray(links.map(\.mergedAt)),
            ]
        }

        /// The rows' property and trait keys (``DefinitionCounts/Shape``) as the three arrays
        /// ``sql`` binds last: each key's message id, name and type.
        static func definitionColumns(_ rows: [PostgresEventWriter.Row]) -> (
            ids: [String], names: [String], types: [String]
        ) {
            var ids: [String] = []
            var names: [String] = []
            var types: [String] = []
            for row in rows {
                guard let shape = row.definitions else { continue }
                for key in shape.keys {
                    ids.append(row.message.messageId)
                    names.append(key.name)
                    types.append(key.type.rawValue)
                }
            }
            return (ids, names, types)
        }

        /// A statement of one shape whatever the batch size: the columns as arrays, zipped by unnest.
        ///
        /// Sessions: one row per session among the events stored now, in session order (lock order);
        /// the user id of its last event to carry one, the anonymous id of its first (arrival order,
        /// as `SessionRollup` picks them for SQLite). Profiles likewise, per user (`ProfileRollup`).
        /// Identity links come from the request's identify and alias calls whether or not they were
        /// stored now (`IdentityLink`, bound as arrays): a link is kept only the first time, so one
        /// made again by a resent call changes nothing; the merge in numbers (`PersonKeys`) is
        /// recorded with the link that won. People get their numbers first
        /// (``personNumbers``), and the events and the merges read them from
        /// `people` (a statement does not see the rows its own parts insert), the events by a hash join
        /// (a lookup per event was a seventh of PostgreSQL's time), kept in the request's order. The
        /// events stored now add rows to `definitions` (their names, and their keys joined by message
        /// id), to `arrivals` and to `event_minutes`.
        static let sql = """
            WITH \(personNumbers), \
            inserted AS (INSERT INTO events (\(columns.map(\.name).joined(separator: ", "))) \
            SELECT \(columns.map(selected).joined(separator: ", ")) \
            FROM unnest(\(placeholders(from: 1, count: bound.count))) WITH ORDINALITY \
            AS batch(\(bound.map(\.name).joined(separator: ", ")), n) \
            LEFT JOIN people k ON k.source = batch.source \
            AND k.person = COALESCE(NULLIF(batch.user_id, ''), NULLIF(batch.anonymous_id, '')) ORDER BY n \
            ON CONFLICT (source, message_id) DO NOTHING \
            RETURNING seq, source, message_id, type, event, user_id, anonymous_id, session_id, timestamp, received_at), \
            touched AS (INSERT INTO sessions \
            (source, session_id, user_id, anonymous_id, first_timestamp, last_timestamp, event_count) \
            SELECT source, session_id, \
            (array_agg(user_id ORDER BY seq DESC) FILTER (WHERE user_id IS NOT NULL))[1], \
            (array_agg(anonymous_id ORDER BY seq) FILTER (WHERE anonymous_id IS NOT NULL))[1], \
            MIN(timestamp), MAX(timestamp), COUNT(*) \
            FROM inserted WHERE session_id IS NOT NULL GROUP BY source, session_id ORDER BY source, session_id \
            ON CONFLICT (source, session_id) DO UPDATE SET \(PostgresEventWriter.sessionMerge) \
            RETURNING source, xmax = 0 AS created), \
            counted AS (INSERT INTO source_counts (source, events, sessions) \
            SELECT e.source, e.n, COALESCE(t.n, 0) FROM (SELECT source, COUNT(*) AS n FROM inserted GROUP BY source) e \
            LEFT JOIN (SELECT source, COUNT(*) FILTER (WHERE created) AS n FROM touched GROUP BY source) t \
            ON t.source = e.source), \
            profiled AS (INSERT INTO profiles (source, user_id, first_seen, last_seen, event_count) \
            SELECT source, user_id, MIN(timestamp), MAX(timestamp), COUNT(*) \
            FROM inserted WHERE user_id IS NOT NULL GROUP BY source, user_id ORDER BY source, user_id \
            ON CONFLICT (source, user_id) DO UPDATE SET \(SQLDialect.postgres.profileMerge)), \
            linked AS (INSERT INTO identities (source, anonymous_id, user_id, merged_at) \
            SELECT src, anon, u, r FROM unnest(\(placeholders(from: bound.count + 1, count: 4))) AS links(src, anon, u, r) \
            ON CONFLICT (source, anonymous_id) DO NOTHING RETURNING source, anonymous_id, user_id), \
            merged AS (INSERT INTO person_merges (anonymous_key, user_key) \
            SELECT -a.person_key, b.person_key FROM linked \
            JOIN people a ON a.source = linked.source AND a.person = linked.anonymous_id \
            JOIN people b ON b.source = linked.source AND b.person = linked.user_id \
            ON CONFLICT (anonymous_key) DO NOTHING), \
            \(dailyPeople), \
            defined AS (INSERT INTO definitions (\(DefinitionCounts.columns)) \
            SELECT source, 'event', event, '', '', COUNT(*), MAX(received_at) FROM inserted \
            WHERE event IS NOT NULL GROUP BY source, event \
            UNION ALL SELECT i.source, CASE WHEN i.type = 'identify' THEN 'trait' ELSE 'property' END, \
            COALESCE(i.event, ''), d.name, d.kind, COUNT(*), MAX(i.received_at) \
            FROM unnest($\(bound.count + 15)::text[], $\(bound.count + 16)::text[], $\(bound.count + 17)::text[]) \
            AS d(message_id, name, kind) \
            JOIN inserted i ON i.message_id = d.message_id GROUP BY 1, 2, 3, 4, 5), \
            arrived AS (INSERT INTO arrivals (source, minute, events) \
            SELECT source, received_at / 60000, COUNT(*) FROM inserted GROUP BY 1, 2), \
            minutes AS (INSERT INTO event_minutes (source, event, minute, events) \
            SELECT source, event, timestamp / 60000, COUNT(*) FROM inserted WHERE event IS NOT NULL GROUP BY 1, 2, 3 \
            UNION ALL SELECT v.vs, i.event, i.timestamp / 60000, COUNT(*) \
            FROM unnest($\(bound.count + 19)::text[], $\(bound.count + 20)::text[], $\(bound.count + 21)::text[]) \
            AS v(vs, src, mid) JOIN inserted i ON i.source = v.src AND i.message_id = v.mid GROUP BY 1, 2, 3) \
            SELECT source, message_id, (SELECT changes FROM daily_people_changes) FROM inserted
            """

        /// The part of the WITH that adds the events' people to their days (``DailyPeopleRollup``):
        /// a row per day and chunk, its bits the list of the chunk's people built here
        /// (``PersonChunkEncoding``: a zero byte, then each offset's two big-endian bytes, as
        /// `int2send` gives them, ascending). Bound after the people: each event's source, name,
        /// local day (worked out by the collector in the source's time zone), person and side, and
        /// whether it is needed; then the count of changes the collector's known people hold for.
        /// When the count moved (a deletion or retention pass, by any collector), every event is
        /// given, whatever the collector thought it knew. Last, each event's message id: only the
        /// events the statement stored (`inserted`) add their people, so a resent message id (with
        /// whatever name, time and person) adds none.
        private static let dailyPeople = """
            daily AS (INSERT INTO daily_people (source, event, day, chunk, bits) \
            SELECT d.src, d.e, d.day, ((k.person_key >> \(PersonSet.chunkShift)) << 1) | d.side, \
            decode('00', 'hex') || string_agg(DISTINCT int2send((k.person_key & \(PersonSet.chunkSize - 1))::int2), \
            ''::bytea ORDER BY int2send((k.person_key & \(PersonSet.chunkSize - 1))::int2)) \
            FROM unnest($\(bound.count + 7)::text[], $\(bound.count + 8)::text[], $\(bound.count + 9)::bigint[], \
            $\(bound.count + 10)::text[], $\(bound.count + 11)::bigint[], $\(bound.count + 12)::boolean[], \
            $\(bound.count + 14)::text[], $\(bound.count + 18)::text[]) AS d(src, e, day, person, side, needed, mid, j) \
            JOIN inserted i ON i.source = d.j AND i.message_id = d.mid \
            JOIN people k ON k.source = d.j AND k.person = d.person \
            WHERE d.needed OR (SELECT changes FROM daily_people_changes) <> $\(bound.count + 13)::bigint \
            GROUP BY d.src, d.e, d.day, ((k.person_key >> \(PersonSet.chunkShift)) << 1) | d.side)
            """

        /// Three parts of the ingest statement's WITH, the people bound as two arrays after the
        /// links (sources, then ids; each person once, sorted). `known` looks each one up (a probe of the unique index
        /// per person, written as a subquery so that the plan, prepared once, never becomes a scan of
        /// the table); `new_people` numbers the others; `people` is everyone with their number, for
        /// the events and the merges (a statement does not see the rows its own parts insert). A
        /// person another writer added after the statement's snapshot is a conflict: `DO UPDATE` (a
        /// no-op) waits for that writer and returns the row, where `DO NOTHING` would return nothing
        /// and leave the events without their number.
        private static let personNumbers = """
            known AS (SELECT s, p, (SELECT k.person_key FROM person_keys k WHERE k.source = t.s AND k.person = t.p) AS key \
            FROM unnest($\(bound.count + 5)::text[], $\(bound.count + 6)::text[]) AS t(s, p)), \
            new_people AS (INSERT INTO person_keys (source, person) SELECT s, p FROM known WHERE key IS NULL ORDER BY s, p \
            ON CONFLICT (source, person) DO UPDATE SET person = excluded.person RETURNING source, person, person_key), \
            people AS (SELECT s AS source, p AS person, key AS person_key FROM known WHERE key IS NOT NULL \
            UNION ALL SELECT source, person, person_key FROM new_people)
            """
    }

    /// How a session row takes in a rollup (`excluded`): the newest user id, the first anonymous
    /// id, the widened time range and the added count.
    private static let sessionMerge = """
        user_id = COALESCE(excluded.user_id, sessions.user_id), \
        anonymous_id = COALESCE(sessions.anonymous_id, excluded.anonymous_id), \
        first_timestamp = LEAST(sessions.first_timestamp, excluded.first_timestamp), \
        last_timestamp = GREATEST(sessions.last_timestamp, excluded.last_timestamp), \
        event_count = sessions.event_count + excluded.event_count
        """
}
