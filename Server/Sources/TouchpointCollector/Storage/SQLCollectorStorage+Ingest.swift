import PostgresNIO

extension SQLCollectorStorage {
    /// The columns of `events` an insert writes, in order (and `lifted`; SQLite also `session_key`).
    static let insertColumns =
        "source, message_id, type, event, user_id, anonymous_id, session_id, timestamp, original_timestamp, sent_at, received_at, payload"

    func insert(_ messages: [IngestMessage], source: String) async throws -> [Bool] {
        guard !messages.isEmpty else { return [] }
        let rows = messages.map { InsertCoalescer.Row(source: source, message: $0) }
        switch ingest {
        case .groupCommit(let coalescer, _):
            return try await coalescer.insert(rows)
        case .postgres(let postgres):
            let unique = InsertCoalescer.firstCopies([rows])
            return unique.flags(stored: try await Self.write(unique.rows, postgres: postgres))[0]
        }
    }

    // Rows go in in the order received, so `seq` is arrival order and a session lists its events in
    // the sender's order.

    /// Stores rows with unique (source, messageId) and their sessions in one SQLite transaction, on
    /// the writer's thread: the rows' keys looked up (``MessageKeyIndex``); each touched session
    /// updated once however many of its events the write holds (and its rowid, the events'
    /// `session_key`, read back); one prepared insert run per new row.
    /// - Returns: per row, whether it was stored now.
    static func write(_ rows: [InsertCoalescer.Row], sqlite: SQLiteBackend, keys: MessageKeyIndex) async throws
        -> [Bool]
    {
        guard !rows.isEmpty else { return [] }
        return try await sqlite.writeNow { connection in
            let found = try keys.lookUp(rows, on: connection)
            let inserted = found.map { !$0.stored }
            let sessions = SessionRollup.rollups(of: rows, stored: inserted)
            var sessionKeys: [SessionRollup.Key: Int64] = [:]
            try connection.queryEach(
                sqliteSessionUpsert, sessions,
                bind: { session, statement in
                    try statement.bind(1, session.source)
                    try statement.bind(2, session.sessionId)
                    try statement.bind(3, session.userId)
                    try statement.bind(4, session.anonymousId)
                    try statement.bind(5, session.firstTimestamp)
                    try statement.bind(6, session.lastTimestamp)
                    try statement.bind(7, session.eventCount)
                },
                row: { session, statement in sessionKeys[session.key] = statement.integer(0) })
            // The ids of a session that has a row already: changed only when they change, so its
            // index entries are rewritten only then.
            _ = try connection.executeEach(sqliteSessionUser, sessions.filter { $0.userId != nil }) {
                session, statement in
                try statement.bind(1, session.userId)
                try statement.bind(2, sessionKeys[session.key])
            }
            _ = try connection.executeEach(sqliteSessionAnonymous, sessions.filter { $0.anonymousId != nil }) {
                session, statement in
                try statement.bind(1, session.anonymousId)
                try statement.bind(2, sessionKeys[session.key])
            }
            let new = rows.indices.filter { inserted[$0] }
            let rowids = try connection.insertEach(sqliteInsertRow, new) { index, statement in
                let row = rows[index]
                try statement.bind(1, row.source)
                try statement.bind(2, row.message.messageId)
                try statement.bind(3, row.message.type.rawValue)
                try statement.bind(4, row.message.name)
                try statement.bind(5, row.message.userId)
                try statement.bind(6, row.message.anonymousId)
                try statement.bind(7, row.message.sessionId)
                try statement.bind(8, row.message.timestamp)
                try statement.bind(9, row.message.originalTimestamp)
                try statement.bind(10, row.message.sentAt)
                try statement.bind(11, row.message.receivedAt)
                try statement.bind(12, row.storedPayload)
                try statement.bind(
                    13,
                    row.message.sessionId.flatMap { sessionKeys[SessionRollup.Key(source: row.source, sessionId: $0)] })
                try statement.bind(14, row.lifted)
            }
            for (index, rowid) in zip(new, rowids) {
                guard let rowid else {
                    throw StorageError(code: .database, message: "SQLite stored no row for an event it had not seen")
                }
                keys.record(found[index].key, seq: rowid)
            }
            let profiles = ProfileRollup.rollups(of: rows, stored: inserted)
            _ = try connection.executeEach(sqliteProfileUpsert, profiles) { profile, statement in
                try statement.bind(1, profile.source)
                try statement.bind(2, profile.userId)
                try statement.bind(3, profile.firstTimestamp)
                try statement.bind(4, profile.lastTimestamp)
                try statement.bind(5, profile.eventCount)
            }
            let links = IdentityLink.links(of: rows, stored: inserted)
            if !links.isEmpty {
                _ = try connection.executeEach(sqliteIdentityInsert, links) { link, statement in
                    try statement.bind(1, link.source)
                    try statement.bind(2, link.anonymousId)
                    try statement.bind(3, link.userId)
                    try statement.bind(4, link.mergedAt)
                }
            }
            return inserted
        }
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
        "INSERT INTO events (\(insertColumns), session_key, lifted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

    /// Adds one rollup to its session row, creating the row for a new session, and returns the
    /// row's rowid (the session's key in `events`). Only the times and the count change here: the
    /// columns of no index but `sessions_recent`.
    private static let sqliteSessionUpsert = """
        INSERT INTO sessions (source, session_id, user_id, anonymous_id, first_timestamp, last_timestamp, event_count) \
        VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (source, session_id) DO UPDATE SET \
        first_timestamp = MIN(sessions.first_timestamp, excluded.first_timestamp), \
        last_timestamp = MAX(sessions.last_timestamp, excluded.last_timestamp), \
        event_count = sessions.event_count + excluded.event_count RETURNING rowid
        """

    /// The newest user id of a session (as `sessionMerge`), when it is another.
    private static let sqliteSessionUser = "UPDATE sessions SET user_id = ? WHERE rowid = ? AND user_id IS NOT ?1"

    /// The first anonymous id of a session (as `sessionMerge`), when it has none.
    private static let sqliteSessionAnonymous =
        "UPDATE sessions SET anonymous_id = ? WHERE rowid = ? AND anonymous_id IS NULL"

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
        var stored = Set<InsertCoalescer.Key>(minimumCapacity: rows.count)
        for (source, messageId) in try await backend.writePrepared(PostgresEventInsert(rows: rows)) {
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

        func makeBindings() throws -> PostgresBindings { PostgresBackend.bindings(postgresInsertColumns(rows)) }

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
            .intArray(rows.map(\.message.receivedAt)), .textArray(rows.map(\.storedPayload)),
            .intArray(rows.map(\.lifted)),
        ]
    }

    /// A statement of one shape whatever the batch size: the columns as arrays, zipped by unnest.
    ///
    /// Sessions: one row per session among the events stored now, in session order (lock order);
    /// the user id of its last event to carry one, the anonymous id of its first (arrival order,
    /// as `SessionRollup` picks them for SQLite). Profiles likewise, per user (`ProfileRollup`).
    /// Identity links come from the request's identify and alias calls whether or not they were
    /// stored now: a link is kept only the first time, so one made again by a resent call changes
    /// nothing (`IdentityLink`).
    private static let postgresInsertSQL = """
        WITH inserted AS (INSERT INTO events (\(insertColumns), lifted) \
        SELECT src, m, t, NULLIF(e, ''), NULLIF(u, ''), NULLIF(a, ''), NULLIF(s, ''), ts, NULLIF(o, ''), \
        NULLIF(sa, '')::bigint, r, p, l \
        FROM unnest($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) \
        AS batch(src, m, t, e, u, a, s, ts, o, sa, r, p, l) \
        ON CONFLICT (source, message_id) DO NOTHING \
        RETURNING seq, source, message_id, user_id, anonymous_id, session_id, timestamp), \
        touched AS (INSERT INTO sessions \
        (source, session_id, user_id, anonymous_id, first_timestamp, last_timestamp, event_count) \
        SELECT source, session_id, \
        (array_agg(user_id ORDER BY seq DESC) FILTER (WHERE user_id IS NOT NULL))[1], \
        (array_agg(anonymous_id ORDER BY seq) FILTER (WHERE anonymous_id IS NOT NULL))[1], \
        MIN(timestamp), MAX(timestamp), COUNT(*) \
        FROM inserted WHERE session_id IS NOT NULL GROUP BY source, session_id ORDER BY source, session_id \
        ON CONFLICT (source, session_id) DO UPDATE SET \(sessionMerge(.postgres))), \
        profiled AS (INSERT INTO profiles (source, user_id, first_seen, last_seen, event_count) \
        SELECT source, user_id, MIN(timestamp), MAX(timestamp), COUNT(*) \
        FROM inserted WHERE user_id IS NOT NULL GROUP BY source, user_id ORDER BY source, user_id \
        ON CONFLICT (source, user_id) DO UPDATE SET \(profileMerge(.postgres))), \
        linked AS (INSERT INTO identities (source, anonymous_id, user_id, merged_at) \
        SELECT src, anon, u, r FROM (SELECT src, u, r, \
        CASE WHEN t = 'alias' THEN p::jsonb ->> 'previousId' ELSE a END AS anon \
        FROM unnest($1, $3, $5, $6, $11, $12) AS links(src, t, u, a, r, p) \
        WHERE u <> '' AND t IN ('identify', 'alias')) AS candidates \
        WHERE anon IS NOT NULL AND anon <> '' AND anon <> u \
        ON CONFLICT (source, anonymous_id) DO NOTHING) \
        SELECT source, message_id FROM inserted
        """
}
