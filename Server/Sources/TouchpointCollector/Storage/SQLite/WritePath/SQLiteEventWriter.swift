import Logging
import TouchpointCore

/// SQLite's event writer: group commit on its one writer, deduplication by keys held in memory
/// and merged in key order, sessions and people found by keys and remembered rowids, contexts kept
/// once.
///
/// A request's messages become rows on its own task (``Row``: payloads compacted, keys hashed,
/// ids packed); a reader with nothing in hand reads ahead what the writer will look up
/// (``lookAhead(_:)``); then the request waits for the next write (``InsertCoalescer``), which
/// stores every request waiting for it in one transaction, step by step (``WriterSteps``):
///
/// 1. keys: which rows are stored already (``MessageKeyIndex``, with ``MessageKeyFilter`` and
///    ``KeysInMemory``);
/// 2. sessions: each session's rollup added to its row (``SessionRows``, ``SessionKeys``);
/// 3. people: each person's number (``PersonKeyCache``);
/// 4. contexts: the shared contexts' rows (``SharedContexts``);
/// 5. events: one prepared insert per new row;
/// 6. counts: the new rows' keys recorded, each source's counts (``SourceCounts``), definitions
///    (``DefinitionCounts``), arrivals (``ArrivalCounts``) and events per minute (``EventMinutes``);
/// 7. profiles, identity links and merges;
/// 8. daily people: each event's person added to its day's set, unless known counted
///    (``DailyPeopleRollup``, ``KnownDailyPeople``);
/// 9. commit: its pages to the write-ahead log, flushed to disk off the writer's thread
///    (``WALSync``) before the requests are answered.
///
/// In the background the keys held in memory are merged into `message_keys` and `session_keys`
/// (``MessageKeyIndex/mergeIfDue(into:logger:)``, ``SessionKeys/mergeIfDue(into:logger:)``).
final class SQLiteEventWriter: EventWriter {
    /// The database, for the sessions and keys looked up on a reader before a write.
    let backend: SQLiteBackend
    /// Whether a reader looks sessions and keys up before a write (``lookAhead(_:)``; tests turn it
    /// off to reach the writer's own lookups).
    let looksAhead: Bool
    let coalescer: InsertCoalescer
    let keys: MessageKeyIndex
    let sessionRows: SessionRows
    let people: PersonKeyCache
    let contexts: SharedContexts
    let steps: WriterSteps
    /// The people counted on recent days.
    let dailyPeople: KnownDailyPeople
    /// Where each source's days begin.
    let calendars: SourceCalendars

    private init(
        backend: SQLiteBackend, keys: MessageKeyIndex, sessionKeys: SessionKeys, calendars: SourceCalendars,
        tuning: SQLiteTuning, logger: Logger
    ) {
        let contexts = SharedContexts()
        let sessionRows = SessionRows(keys: sessionKeys)
        let people = PersonKeyCache()
        let steps = WriterSteps()
        let dailyPeople = KnownDailyPeople()
        self.dailyPeople = dailyPeople
        self.calendars = calendars
        self.backend = backend
        looksAhead = tuning.sessionsLookedUpAhead
        self.keys = keys
        self.sessionRows = sessionRows
        self.people = people
        self.contexts = contexts
        self.steps = steps
        coalescer = InsertCoalescer(maximumRows: 5000) { rows in
            let written = try await Self.write(
                rows, sqlite: backend, keys: keys, contexts: contexts, sessionRows: sessionRows, people: people,
                dailyPeople: dailyPeople, calendars: calendars, steps: steps)
            keys.mergeIfDue(into: backend, logger: logger)
            sessionKeys.mergeIfDue(into: backend, logger: logger)
            return (written.stored, written.ticket.whenDurable)
        }
    }

    /// Reads what the writer keeps between writes from the database at `path` (its key secret,
    /// watermarks, the keys after them and the saved filter over `message_keys`), once its schema
    /// is current.
    static func open(
        _ backend: SQLiteBackend, path: String, calendars: SourceCalendars, tuning: SQLiteTuning, logger: Logger
    ) async throws -> SQLiteEventWriter {
        let (keys, sessionKeys) = try await backend.writeNow { connection in
            let keys = try MessageKeyIndex.load(
                connection, minimumMerge: tuning.minimumMerge, maximumMerge: tuning.maximumMerge,
                keyOverride: tuning.keyOverride, freeSlice: tuning.freeSlice,
                filterFile: path + MessageKeyIndex.filterFileSuffix, logger: logger)
            let sessionKeys = try SessionKeys.load(
                connection, key: keys.key, minimumMerge: tuning.sessionMerge.minimum,
                maximumMerge: tuning.sessionMerge.maximum)
            return (keys, sessionKeys)
        }
        let writer = SQLiteEventWriter(
            backend: backend, keys: keys, sessionKeys: sessionKeys, calendars: calendars, tuning: tuning,
            logger: logger)
        // Not left to the first write: after a crash the filter is to be built (ingest reads
        // the table for every new key until it is), and a backlog may be due.
        if tuning.mergeAtStart, keys.mergedThrough > 0 || keys.keysInMemory > 0 {
            keys.mergeIfDue(into: backend, logger: logger)
        }
        if tuning.mergeAtStart { sessionKeys.mergeIfDue(into: backend, logger: logger) }
        return writer
    }

    func insert(_ messages: [IngestMessage], source: String) async throws -> [Bool] {
        guard !messages.isEmpty else { return [] }
        let rows = self.rows(messages, source: source)
        if looksAhead { await lookAhead(rows) }
        return try await coalescer.insert(rows)
    }

    /// The rows that store `messages` for `source` (their payloads compacted, their keys hashed).
    func rows(_ messages: [IngestMessage], source: String) -> [Row] {
        let key = keys.key
        return messages.map { Row(source: source, message: $0, keyedBy: key) }
    }

    /// Stops the merges after their current transactions and saves the filter over `message_keys`
    /// beside the database for the next start.
    func close() async {
        await keys.stopMerging()
        await keys.saveFilter()
        await sessionRows.keys.stopMerging()
    }

    func forgetPeople() {
        people.forgetAll()
        dailyPeople.forgetAll()
    }

    func forgetDailyPeople() { dailyPeople.forgetAll() }

    /// Where the writer spends its time (``WriterSteps``), the message keys and the session keys.
    func metrics() -> String {
        steps.prometheusText() + keys.prometheusText() + sessionRows.keys.prometheusText()
    }

    /// Reads, on a reader connection and before `rows` reach the writer, what the writer will
    /// read for them and may not find in memory: the sessions it does not remember
    /// (``SessionRows/unremembered(in:)``, whose rowids it then remembers) and the stored forms
    /// of the keys the filter passes (``MessageKeyIndex/readAhead(_:on:)``). In a store larger
    /// than memory the writer, one write at a time, waited on the disk for each of those pages;
    /// read here, in parallel with it, they are in memory by the time it needs them.
    ///
    /// Only a reader with nothing in hand is asked (``SQLiteBackend/readIfIdle(_:)``): a request
    /// never waits behind a query of the dashboard's for this, and nothing is worked out for a
    /// look-ahead that does not run. One skipped or failed is no failure of the write, which
    /// looks everything up itself. Each one asked is counted, read or skipped (a failed read
    /// counts as skipped), in ``WriterSteps``.
    func lookAhead(_ rows: [Row]) async {
        let sessions = sessionRows.unremembered(in: rows)
        // Before the filter is built every key would be looked up: none is read ahead.
        guard !sessions.isEmpty || keys.filterCapacity != nil else { return }
        let (keys, sessionRows) = (self.keys, self.sessionRows)
        let found = try? await backend.readIfIdle { connection in
            try keys.readAhead(rows, on: connection)
            return try sessionRows.find(sessions, on: connection)
        }
        if let found { sessionRows.remember(found) }
        steps.recordLookAhead(read: found != nil)
    }

    /// SQLite finds them through the index on `session_key` (in seq order within a key: the rowid
    /// ends each entry), the sessions' rows found by their keys (``SessionKeys``: in
    /// `session_keys`, and those in memory, taken here before the query's read begins), and the
    /// session id compared too (two sessions may share a key; the events' ids may be packed,
    /// ``PackedID``).
    func appendSessions(source: String, _ sessionIds: [String], to statement: inout SQLStatement) {
        let keys = sessionRows.keys
        let sessionKeys = sessionIds.map { keys.key(source, $0) }
        statement.append("session_key IN (SELECT session FROM session_keys WHERE key IN ")
        statement.bindTuple(sessionKeys.map { .int($0) })
        for (index, rowid) in keys.rowsInMemory(sessionKeys).enumerated() {
            statement.append(index == 0 ? " UNION ALL VALUES (" : ", (")
            statement.bind(.int(rowid))
            statement.append(")")
        }
        // `+`: the source is checked on each row found; the planner is not to enter by the index on
        // (source, minute) instead.
        statement.append(") AND +source = ")
        statement.bind(.text(source))
        statement.append(" AND touchpoint_id(session_id) IN ")
        statement.bindTuple(sessionIds.map { .text($0) })
    }

    // Rows go in in the order received, so `seq` is arrival order and a session lists its events in
    // the sender's order.

    /// Stores rows with unique (source, messageId) and their sessions in one SQLite transaction, on
    /// the writer's thread: the rows' keys looked up (``MessageKeyIndex``); each touched session
    /// updated once however many of its events the write holds (and its rowid, the events'
    /// `session_key`, read back); one prepared insert run per new row.
    /// - Returns: per row, whether it was stored now; and the commit's ticket, for the answers to
    ///   wait on until it is on disk (``WALSync``).
    static func write(
        _ rows: [Row], sqlite: SQLiteBackend, keys: MessageKeyIndex, contexts: SharedContexts,
        sessionRows: SessionRows, people: PersonKeyCache, dailyPeople: KnownDailyPeople, calendars: SourceCalendars,
        steps: WriterSteps
    ) async throws -> (stored: [Bool], ticket: WALSync.Ticket) {
        guard !rows.isEmpty else { return ([], WALSync.Ticket(sync: sqlite.walSync, number: 0)) }
        let (written, ticket) = try await sqlite.writeCommitted(timedBy: steps, rows: rows.count) { connection, laps in
            let found = try keys.lookUp(rows, on: connection)
            laps.end(.keys)
            let inserted = found.map { !$0.stored }
            let (sessions, sessionOfRow) = SessionRollup.grouped(rows, stored: inserted)
            // What the write adds to each source's counts (`SourceCounts`).
            var counted: [String: (events: Int, sessions: Int)] = [:]
            let sessionKeys = try sessionRows.add(sessions, on: connection)
            for (session, row) in zip(sessions, sessionKeys) where row.isNew {
                counted[session.source, default: (0, 0)].sessions += 1
            }
            laps.end(.sessions)
            let links = IdentityLink.links(of: rows, stored: inserted)
            let everyone = PersonKeys.people(of: rows, stored: inserted, links: links)
            let known = people.keys(of: everyone)
            let personKeys = try PersonKeyCache.keys(everyone, known: known.known, on: connection)
            laps.end(.people)
            let new = rows.indices.filter { inserted[$0] }
            let shared = try contexts.references(rows, new: new, on: connection)
            laps.end(.contexts)
            // Bound by the columns' parameters in the declared insert (``EventsTable``), read once.
            let insert = Self.insertEvent
            let at = insert.parameters
            let rowids = try connection.insertEach(insert.sql, new) { index, statement in
                let row = rows[index]
                let context = shared[index]
                let stored = context == nil ? row.stored.inline : row.stored
                try statement.bind(at[.source], row.source)
                try statement.bind(id: at[.messageId], row.message.messageId, packed: row.packedMessageId)
                try statement.bind(at[.type], row.message.type.rawValue)
                try statement.bind(at[.event], row.message.name)
                try statement.bind(at[.userId], row.message.userId)
                try statement.bind(at[.anonymousId], row.message.anonymousId)
                try statement.bind(id: at[.sessionId], row.message.sessionId, packed: row.packedSessionId)
                try statement.bind(at[.timestamp], row.message.timestamp)
                try statement.bind(
                    at[.originalTimestamp], stored.lifted.contains(.derivedTime) ? nil : row.message.originalTimestamp)
                try statement.bind(at[.sentAt], row.message.sentAt)
                try statement.bind(at[.receivedAt], row.message.receivedAt)
                try statement.bind(at[.payload], stored.payload)
                try statement.bind(at[.sessionKey], sessionOfRow[index].map { sessionKeys[$0].rowid })
                try statement.bind(at[.lifted], stored.lifted.rawValue)
                try statement.bind(
                    at[.personKey],
                    row.person.flatMap { found in
                        personKeys[found.person].map { PersonKeys.eventKey($0, isUser: found.isUser) }
                    })
                try statement.bind(at[.contextId], context)
            }
            laps.end(.events)
            var definitions = DefinitionCounts()
            var arrivals: [ArrivalKey: Int64] = [:]
            var minutes: [EventMinutes.Key: Int64] = [:]
            // SQLite gives the seq of a deleted newest event again: a new event whose seq a
            // backfill has yet to reach is left to it (``BackfillProgress``).
            var definitionsProgress = BackfillProgress(done: 0, last: 0)
            var minutesProgress = BackfillProgress(done: 0, last: 0)
            try connection.queryEach(
                "SELECT d.done, d.last, m.done, m.last FROM definitions_backfill d, event_minutes_backfill m", []
            ) { statement in
                definitionsProgress = BackfillProgress(done: statement.integer(0), last: statement.integer(1))
                minutesProgress = BackfillProgress(done: statement.integer(2), last: statement.integer(3))
            }
            // The values of the properties each event's source keeps (``ValueRollup``), by row.
            var values: [Int: [(property: String, value: ValueRollup.Value)]] = [:]
            // A seq SQLite gives again at or below where a property was first kept is left to the
            // count of the events stored before (``ValueRollup/runBatch(_:calendars:limit:)``).
            var valueProgress: [ValueRollupKey: BackfillProgress] = [:]
            let keptBySource = calendars.rollups.bySource
            if !keptBySource.isEmpty {
                try connection.queryEach("SELECT source, property, since_seq, done FROM value_rollups", []) { row in
                    guard let source = row.text(0), let property = row.text(1) else { return }
                    let key = ValueRollupKey(source: source, property: property)
                    valueProgress[key] = BackfillProgress(done: row.integer(3), last: row.integer(2))
                }
            }
            for (index, rowid) in zip(new, rowids) {
                guard let rowid else {
                    throw StorageError(code: .database, message: "SQLite stored no row for an event it had not seen")
                }
                let row = rows[index]
                if let kept = keptBySource[row.source], let name = row.message.name {
                    let found = ValueRollup.values(of: kept, payload: row.message.payload, lifted: 0)
                    let minute = EventMinutes.minute(of: row.message.timestamp)
                    values[index] = Array(zip(kept, found))
                    for (property, value) in zip(kept, found)
                    where valueProgress[ValueRollupKey(source: row.source, property: property)]?.counts(rowid) ?? true {
                        let source = ValueRollup.source(of: row.source, property: property, value: value)
                        minutes[EventMinutes.Key(source: source, event: name, minute: minute), default: 0] += 1
                    }
                }
                keys.record(found[index].key, seq: rowid)
                counted[row.source, default: (0, 0)].events += 1
                if let shape = row.definitions, definitionsProgress.counts(rowid) {
                    definitions.add(shape, lastSeen: row.message.receivedAt)
                }
                arrivals[ArrivalKey(source: row.source, minute: row.message.receivedAt / 60_000), default: 0] += 1
                if let name = row.message.name, minutesProgress.counts(rowid) {
                    let minute = EventMinutes.minute(of: row.message.timestamp)
                    minutes[EventMinutes.Key(source: row.source, event: name, minute: minute), default: 0] += 1
                }
            }
            _ = try connection.executeEach(sourceCountsChange, counted.sorted { $0.key < $1.key }) {
                change, statement in
                try statement.bind(1, change.key)
                try statement.bind(2, Int64(change.value.events))
                try statement.bind(3, Int64(change.value.sessions))
            }
            _ = try connection.executeEach(DefinitionCounts.sqliteUpsert, definitions.changes) { change, statement in
                try statement.bind(1, change.key.source)
                try statement.bind(2, change.key.kind.rawValue)
                try statement.bind(3, change.key.event)
                try statement.bind(4, change.key.property)
                try statement.bind(5, change.key.type)
                try statement.bind(6, change.events)
                try statement.bind(7, change.lastSeen)
            }
            _ = try connection.executeEach(ArrivalCounts.sqliteUpsert, arrivals.sorted { $0.key < $1.key }) {
                arrival, statement in
                try statement.bind(1, arrival.key.source)
                try statement.bind(2, arrival.key.minute)
                try statement.bind(3, arrival.value)
            }
            _ = try connection.executeEach(EventMinutes.sqliteUpsert, minutes.sorted { $0.key < $1.key }) {
                counted, statement in
                try statement.bind(1, counted.key.source)
                try statement.bind(2, counted.key.event)
                try statement.bind(3, counted.key.minute)
                try statement.bind(4, counted.value)
            }
            laps.end(.counts)
            let profiles = ProfileRollup.rollups(of: rows, stored: inserted)
            _ = try connection.executeEach(profileUpsert, profiles) { profile, statement in
                try statement.bind(1, profile.source)
                try statement.bind(2, profile.userId)
                try statement.bind(3, profile.firstTimestamp)
                try statement.bind(4, profile.lastTimestamp)
                try statement.bind(5, profile.eventCount)
            }
            if !links.isEmpty {
                _ = try connection.executeEach(identityInsert, links) { link, statement in
                    try statement.bind(1, link.source)
                    try statement.bind(2, link.anonymousId)
                    try statement.bind(3, link.userId)
                    try statement.bind(4, link.mergedAt)
                }
                // The same merges in numbers, in the same order (so the same one wins).
                // (Every id of a link was given its number above.)
                let merges = links.compactMap { link -> (Int64, Int64)? in
                    guard let anonymous = personKeys[PersonKeys.Person(source: link.source, id: link.anonymousId)],
                        let user = personKeys[PersonKeys.Person(source: link.source, id: link.userId)]
                    else { return nil }
                    return (PersonKeys.eventKey(anonymous, isUser: false), user)
                }
                _ = try connection.executeEach(PersonKeyCache.merge, merges) { merge, statement in
                    try statement.bind(1, merge.0)
                    try statement.bind(2, merge.1)
                }
            }
            laps.end(.profiles)
            var days = DailyPeopleDays(calendars)
            var entries: [DailyPeopleRollup.Entry] = []
            entries.reserveCapacity(new.count)
            for index in new {
                let row = rows[index]
                guard let event = row.message.name, let found = row.person, let number = personKeys[found.person]
                else { continue }
                let day = days.day(of: row.message.timestamp, source: row.source)
                entries.append(
                    DailyPeopleRollup.Entry(
                        key: DailyPeopleRollup.Key(source: row.source, event: event, day: day), number: number,
                        anonymous: !found.isUser))
                for (property, value) in values[index] ?? [] {
                    let source = ValueRollup.source(of: row.source, property: property, value: value)
                    entries.append(
                        DailyPeopleRollup.Entry(
                            key: DailyPeopleRollup.Key(source: source, event: event, day: day), number: number,
                            anonymous: !found.isUser))
                }
            }
            let added = dailyPeople.unknown(entries)
            _ = try connection.executeEach(SQLDialect.sqlite.dailyPeopleAdd, DailyPeopleRollup.rows(added.added)) {
                row, statement in
                try statement.bind(1, row.key.source)
                try statement.bind(2, row.key.event)
                try statement.bind(3, row.key.day)
                try statement.bind(4, row.chunk)
                try statement.bind(blob: 5, row.bits)
            }
            laps.end(.dailyPeople)
            return (
                inserted: inserted, personKeys: personKeys, generation: known.generation, dailyPeople: added
            )
        }
        // Committed: the people's numbers and days are kept for the next writes.
        people.remember(written.personKeys, since: written.generation)
        dailyPeople.remember(written.dailyPeople.added, since: written.dailyPeople.generation)
        return (written.inserted, ticket)
    }

    /// A source's minute of arrival (``ArrivalCounts``).
    private struct ArrivalKey: Hashable, Comparable {
        var source: String
        var minute: Int64

        static func < (lhs: ArrivalKey, rhs: ArrivalKey) -> Bool { (lhs.source, lhs.minute) < (rhs.source, rhs.minute) }
    }

    /// Adds one user's share of a write to their profile row, creating it for a new user.
    private static let profileUpsert = """
        INSERT INTO profiles (source, user_id, first_seen, last_seen, event_count) VALUES (?, ?, ?, ?, ?) \
        ON CONFLICT (source, user_id) DO UPDATE SET \(SQLDialect.sqlite.profileMerge)
        """

    /// Adds a write's events and new sessions to a source's counts (``SourceCounts``).
    private static let sourceCountsChange =
        "INSERT INTO source_counts (source, events, sessions) VALUES (?, ?, ?)" + SQLDialect.sqlite.sourceCountsMerge

    /// Records that an anonymous id is a user's, unless it was merged before (the first merge wins).
    private static let identityInsert = """
        INSERT INTO identities (source, anonymous_id, user_id, merged_at) VALUES (?, ?, ?, ?) \
        ON CONFLICT (source, anonymous_id) DO NOTHING
        """

    /// An event's row: a value for every column but `seq` (its rowid, arrival order), each bound
    /// once per row (a statement keeps the last row's values for a parameter left unbound).
    static let insertEvent = EventsTable.RowInsert(EventsTable.insert(in: .sqlite))
}
