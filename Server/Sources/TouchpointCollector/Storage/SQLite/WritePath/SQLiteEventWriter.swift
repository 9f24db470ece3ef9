import PostgresNIO
import TouchpointCore

extension SQLCollectorStorage {
    /// The columns of `events` an insert writes, in order (and `lifted` and `person_key`; SQLite
    /// also `session_key` and `context_id`).
    static let insertColumns =
        "source, message_id, type, event, user_id, anonymous_id, session_id, timestamp, original_timestamp, sent_at, received_at, payload"

    func insert(_ messages: [IngestMessage], source: String) async throws -> [Bool] {
        guard !messages.isEmpty else { return [] }
        let rows = self.rows(messages, source: source)
        switch ingest {
        case .groupCommit(let writer):
            if writer.looksAhead { await writer.lookAhead(rows) }
            return try await writer.coalescer.insert(rows)
        case .postgres(let postgres):
            let unique = InsertCoalescer.firstCopies([rows])
            let stored = unique.flags(stored: try await Self.write(unique.rows, postgres: postgres))[0]
            // Each write added a row to the source's counts: fold them now and then. A fold that
            // fails (a deadlock with another) is tried again by a later one or by the next read.
            let written = writes.withLock {
                $0 += 1
                return $0
            }
            if written % SourceCounts.foldEvery == 0 { try? await foldCounts(source: source) }
            return stored
        }
    }

    /// The rows that store `messages` for `source` (their payloads compacted, their keys hashed).
    func rows(_ messages: [IngestMessage], source: String) -> [InsertCoalescer.Row] {
        let key = messageKeys?.key
        return messages.map { InsertCoalescer.Row(source: source, message: $0, keyedBy: key) }
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
        _ rows: [InsertCoalescer.Row], sqlite: SQLiteBackend, keys: MessageKeyIndex, contexts: SharedContexts,
        sessionRows: SessionRows, people: PersonKeyCache, steps: WriterSteps
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
            let personKeys = try PersonKeys.sqliteKeys(everyone, known: known.known, on: connection)
            laps.end(.people)
            let new = rows.indices.filter { inserted[$0] }
            let shared = try contexts.references(rows, new: new, on: connection)
            laps.end(.contexts)
            let rowids = try connection.insertEach(sqliteInsertRow, new) { index, statement in
                let row = rows[index]
                let context = shared[index]
                let stored = context == nil ? row.stored.inline : row.stored
                try statement.bind(1, row.source)
                try statement.bind(id: 2, row.message.messageId, packed: row.packedMessageId)
                try statement.bind(3, row.message.type.rawValue)
                try statement.bind(4, row.message.name)
                try statement.bind(5, row.message.userId)
                try statement.bind(6, row.message.anonymousId)
                try statement.bind(id: 7, row.message.sessionId, packed: row.packedSessionId)
                try statement.bind(8, row.message.timestamp)
                try statement.bind(
                    9, stored.lifted.contains(.derivedTime) ? nil : row.message.originalTimestamp)
                try statement.bind(10, row.message.sentAt)
                try statement.bind(11, row.message.receivedAt)
                try statement.bind(12, stored.payload)
                try statement.bind(13, sessionOfRow[index].map { sessionKeys[$0].rowid })
                try statement.bind(14, stored.lifted.rawValue)
                try statement.bind(
                    15,
                    PersonKeys.person(of: row).flatMap { found in
                        personKeys[found.person].map { PersonKeys.eventKey($0, isUser: found.isUser) }
                    })
                try statement.bind(16, context)
            }
            laps.end(.events)
            for (index, rowid) in zip(new, rowids) {
                guard let rowid else {
                    throw StorageError(code: .database, message: "SQLite stored no row for an event it had not seen")
                }
                keys.record(found[index].key, seq: rowid)
                counted[rows[index].source, default: (0, 0)].events += 1
            }
            _ = try connection.executeEach(SourceCounts.sqliteChange, counted.sorted { $0.key < $1.key }) {
                change, statement in
                try statement.bind(1, change.key)
                try statement.bind(2, Int64(change.value.events))
                try statement.bind(3, Int64(change.value.sessions))
            }
            laps.end(.counts)
            let profiles = ProfileRollup.rollups(of: rows, stored: inserted)
            _ = try connection.executeEach(sqliteProfileUpsert, profiles) { profile, statement in
                try statement.bind(1, profile.source)
                try statement.bind(2, profile.userId)
                try statement.bind(3, profile.firstTimestamp)
                try statement.bind(4, profile.lastTimestamp)
                try statement.bind(5, profile.eventCount)
            }
            if !links.isEmpty {
                _ = try connection.executeEach(sqliteIdentityInsert, links) { link, statement in
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
                _ = try connection.executeEach(PersonKeys.sqliteMerge, merges) { merge, statement in
                    try statement.bind(1, merge.0)
                    try statement.bind(2, merge.1)
                }
            }
            laps.end(.profiles)
            return (inserted: inserted, personKeys: personKeys, generation: known.generation)
        }
        // Committed: the people's numbers are kept for the next writes.
        people.remember(written.personKeys, since: written.generation)
        return (written.inserted, ticket)
    }

    /// Adds one user's share of a write to their profile row, creating it for a new user.
    private static let sqliteProfileUpsert = """
        INSERT INTO profiles (source, user_id, first_seen, last_seen, event_count) VALUES (?, ?, ?, ?, ?) \
        ON CONFLICT (source, user_id) DO UPDATE SET \(profileMerge(.sqlite))
        """

    /// Records that an anonymous id is a user's, unless it was merged before (the first merge wins).
    private static let sqliteIdentityInsert = """
        INSERT INTO identities (source, anonymous_id, user_id, merged_at) VALUES (?, ?, ?, ?) \
        ON CONFLICT (source, anonymous_id) DO NOTHING
        """

    /// How a profile row takes in a rollup (`excluded`). The same for both dialects.
    static func profileMerge(_ dialect: SQLDialect) -> String {
        """
        first_seen = \(dialect.least)(profiles.first_seen, excluded.first_seen), \
        last_seen = \(dialect.greatest)(profiles.last_seen, excluded.last_seen), \
        event_count = profiles.event_count + excluded.event_count
        """
    }

    private static let sqliteInsertRow =
        "INSERT INTO events (\(insertColumns), session_key, lifted, person_key, context_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

    /// Stores rows with unique (source, messageId) and their sessions atomically, in one statement
    /// with a data-modifying WITH.
    ///
    /// Two collectors inserting the same batch (a retry that reached both) lock its keys in the same
    /// order and cannot deadlock; only overlapping batches in different orders could, and then
    /// PostgreSQL aborts one statement, which `PostgresBackend` runs again (and past its retries
    /// the sender gets a 5xx and retries).
    /// - Returns: per row, whether it was stored now.
    static func write(_ rows: [InsertCoalescer.Row], postgres backend: PostgresBackend) async throws -> [Bool] {
        guard !rows.isEmpty else { return [] }
        let all = Array(repeating: true, count: rows.count)
        let links = IdentityLink.links(of: rows, stored: all)
        let people = PersonKeys.people(of: rows, stored: all, links: links)
        let inserted = try await backend.writePrepared(PostgresEventInsert(rows: rows, links: links, people: people))
        var stored = Set<InsertCoalescer.Key>(minimumCapacity: rows.count)
        for (source, messageId) in inserted {
            stored.insert(InsertCoalescer.Key(source: source, messageId: messageId))
        }
        return rows.map { stored.contains($0.key) }
    }

    /// The PostgreSQL ingest statement: the same SQL whatever the rows (their columns are bound as
    /// arrays), so it is prepared once per connection and PostgreSQL parses and plans it once, not
    /// for every request (that was about a tenth of PostgreSQL's time per event).
    struct PostgresEventInsert: PostgresPreparedStatement {
        typealias Row = (String, String)
        static let name = "touchpoint_insert_events"
        static let sql = postgresInsertSQL
        let rows: [InsertCoalescer.Row]
        let links: [IdentityLink]
        let people: [PersonKeys.Person]

        func makeBindings() throws -> PostgresBindings {
            PostgresBackend.bindings(
                postgresInsertColumns(rows) + postgresLinkColumns(links)
                    + [.textArray(people.map(\.source)), .textArray(people.map(\.id))])
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode((String, String).self) }
    }

    /// How a session row takes in a rollup (`excluded`): the newest user id, the first anonymous
    /// id, the widened time range and the added count. The same for both dialects.
    static func sessionMerge(_ dialect: SQLDialect) -> String {
        """
        user_id = COALESCE(excluded.user_id, sessions.user_id), \
        anonymous_id = COALESCE(sessions.anonymous_id, excluded.anonymous_id), \
        first_timestamp = \(dialect.least)(sessions.first_timestamp, excluded.first_timestamp), \
        last_timestamp = \(dialect.greatest)(sessions.last_timestamp, excluded.last_timestamp), \
        event_count = sessions.event_count + excluded.event_count
        """
    }

    /// The rows' columns as the thirteen arrays `postgresInsertSQL` binds ($1 … $13), in the order of
    /// `insertColumns` and then `lifted`. Empty text stands for NULL (the decoder never produces empty ids or names).
    private static func postgresInsertColumns(_ rows: [InsertCoalescer.Row]) -> [SQLValue] {
        [
            .textArray(rows.map(\.source)),
            .textArray(rows.map(\.message.messageId)), .textArray(rows.map(\.message.type.rawValue)),
            .textArray(rows.map { $0.message.name ?? "" }), .textArray(rows.map { $0.message.userId ?? "" }),
            .textArray(rows.map { $0.message.anonymousId ?? "" }),
            .textArray(rows.map { $0.message.sessionId ?? "" }), .intArray(rows.map(\.message.timestamp)),
            .textArray(rows.map { $0.message.originalTimestamp ?? "" }),
            .textArray(rows.map { $0.message.sentAt.map(String.init) ?? "" }),
            .intArray(rows.map(\.message.receivedAt)), .textArray(rows.map(\.stored.inline.payload)),
            .intArray(rows.map(\.stored.inline.lifted.rawValue)),
        ]
    }

    /// The identity links as the four arrays `postgresInsertSQL` binds ($14 … $17): source,
    /// anonymous id, user id, time of the merge.
    private static func postgresLinkColumns(_ links: [IdentityLink]) -> [SQLValue] {
        [
            .textArray(links.map(\.source)), .textArray(links.map(\.anonymousId)),
            .textArray(links.map(\.userId)), .intArray(links.map(\.mergedAt)),
        ]
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
    /// (``PersonKeys/postgresPeople``, $18 and $19), and the events and the merges read them from
    /// `people` (a statement does not see the rows its own parts insert), the events by a hash join
    /// (a lookup per event was a seventh of PostgreSQL's time), kept in the request's order.
    private static let postgresInsertSQL = """
        WITH \(PersonKeys.postgresPeople), \
        inserted AS (INSERT INTO events (\(insertColumns), lifted, person_key) \
        SELECT src, m, t, NULLIF(e, ''), NULLIF(u, ''), NULLIF(a, ''), NULLIF(s, ''), ts, NULLIF(o, ''), \
        NULLIF(sa, '')::bigint, r, p, l, CASE WHEN u <> '' THEN k.person_key ELSE -k.person_key END \
        FROM unnest($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) WITH ORDINALITY \
        AS batch(src, m, t, e, u, a, s, ts, o, sa, r, p, l, n) \
        LEFT JOIN people k ON k.source = src AND k.person = COALESCE(NULLIF(u, ''), NULLIF(a, '')) ORDER BY n \
        ON CONFLICT (source, message_id) DO NOTHING \
        RETURNING seq, source, message_id, user_id, anonymous_id, session_id, timestamp), \
        touched AS (INSERT INTO sessions \
        (source, session_id, user_id, anonymous_id, first_timestamp, last_timestamp, event_count) \
        SELECT source, session_id, \
        (array_agg(user_id ORDER BY seq DESC) FILTER (WHERE user_id IS NOT NULL))[1], \
        (array_agg(anonymous_id ORDER BY seq) FILTER (WHERE anonymous_id IS NOT NULL))[1], \
        MIN(timestamp), MAX(timestamp), COUNT(*) \
        FROM inserted WHERE session_id IS NOT NULL GROUP BY source, session_id ORDER BY source, session_id \
        ON CONFLICT (source, session_id) DO UPDATE SET \(sessionMerge(.postgres)) \
        RETURNING source, xmax = 0 AS created), \
        counted AS (INSERT INTO source_counts (source, events, sessions) \
        SELECT e.source, e.n, COALESCE(t.n, 0) FROM (SELECT source, COUNT(*) AS n FROM inserted GROUP BY source) e \
        LEFT JOIN (SELECT source, COUNT(*) FILTER (WHERE created) AS n FROM touched GROUP BY source) t \
        ON t.source = e.source), \
        profiled AS (INSERT INTO profiles (source, user_id, first_seen, last_seen, event_count) \
        SELECT source, user_id, MIN(timestamp), MAX(timestamp), COUNT(*) \
        FROM inserted WHERE user_id IS NOT NULL GROUP BY source, user_id ORDER BY source, user_id \
        ON CONFLICT (source, user_id) DO UPDATE SET \(profileMerge(.postgres))), \
        linked AS (INSERT INTO identities (source, anonymous_id, user_id, merged_at) \
        SELECT src, anon, u, r FROM unnest($14, $15, $16, $17) AS links(src, anon, u, r) \
        ON CONFLICT (source, anonymous_id) DO NOTHING RETURNING source, anonymous_id, user_id), \
        merged AS (INSERT INTO person_merges (anonymous_key, user_key) \
        SELECT -a.person_key, b.person_key FROM linked \
        JOIN people a ON a.source = linked.source AND a.person = linked.anonymous_id \
        JOIN people b ON b.source = linked.source AND b.person = linked.user_id \
        ON CONFLICT (anonymous_key) DO NOTHING) \
        SELECT source, message_id FROM inserted
        """
}

extension SQLCollectorStorage.GroupCommit {
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
    func lookAhead(_ rows: [InsertCoalescer.Row]) async {
        let sessions = sessionRows.unremembered(in: rows)
        // Before the filter is built every key would be looked up: none is read ahead.
        guard !sessions.isEmpty || keys.filterCapacity != nil else { return }
        let keys = keys
        let sessionRows = sessionRows
        let found = try? await backend.readIfIdle { connection in
            try keys.readAhead(rows, on: connection)
            return try sessionRows.find(sessions, on: connection)
        }
        if let found { sessionRows.remember(found) }
        steps.recordLookAhead(read: found != nil)
    }
}
