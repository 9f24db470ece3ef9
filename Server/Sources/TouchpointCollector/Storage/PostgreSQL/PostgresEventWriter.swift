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
/// one before); a source's rows are folded into one every ``SourceCounts/foldEvery`` writes.
/// Contexts stay inline: rows that every write updates would make the writes wait for each other.
final class PostgresEventWriter: EventWriter {
    let backend: PostgresBackend
    /// Writes so far (the counts are folded every ``SourceCounts/foldEvery``).
    private let writes = Locked(0)

    init(backend: PostgresBackend) {
        self.backend = backend
    }

    /// One event to store: its payload without the members its columns hold (``StoredPayload``),
    /// its person hashed, both on the request's task.
    struct Row: EventRow, Sendable {
        let source: String
        let message: IngestMessage
        let stored: StoredPayload.Compacted
        let person: (person: PersonKeys.Person, isUser: Bool)?

        init(source: String, message: IngestMessage) {
            self.source = source
            self.message = message
            stored = StoredPayload.compact(
                message.payload, columns: StoredPayload.Columns(message), shareContext: false,
                unwrapProperties: false)
            person = PersonKeys.person(source: source, message: message)
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
        if written % SourceCounts.foldEvery == 0 { try? await SourceCounts.fold(source: source, in: backend) }
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
        let inserted = try await backend.writePrepared(Insert(rows: rows, links: links, people: people))
        var stored = Set<MessageIdentity>(minimumCapacity: rows.count)
        for (source, messageId) in inserted {
            stored.insert(MessageIdentity(source: source, messageId: messageId))
        }
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

    /// Nothing measured: the writes run in parallel, each timed by the request that made it.
    func metrics() -> String { "" }

    /// Nothing runs in the background.
    func close() async {}

    /// The ingest statement: the same SQL whatever the rows (their columns are bound as arrays), so
    /// it is prepared once per connection and PostgreSQL parses and plans it once, not for every
    /// request (that was about a tenth of PostgreSQL's time per event).
    struct Insert: PostgresPreparedStatement {
        typealias Row = (String, String)
        static let name = "touchpoint_insert_events"
        let rows: [PostgresEventWriter.Row]
        let links: [IdentityLink]
        let people: [PersonKeys.Person]

        func makeBindings() throws -> PostgresBindings {
            PostgresBackend.bindings(
                Self.eventColumns(rows) + Self.linkColumns(links)
                    + [.textArray(people.map(\.source)), .textArray(people.map(\.id))])
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode((String, String).self) }

        /// The rows' columns as the thirteen arrays ``sql`` binds ($1 … $13), in the order of
        /// `insertColumns` and then `lifted`. Empty text stands for NULL (the decoder never produces empty ids or names).
        static func eventColumns(_ rows: [PostgresEventWriter.Row]) -> [SQLValue] {
            [
                .textArray(rows.map(\.source)),
                .textArray(rows.map(\.message.messageId)), .textArray(rows.map(\.message.type.rawValue)),
                .textArray(rows.map { $0.message.name ?? "" }), .textArray(rows.map { $0.message.userId ?? "" }),
                .textArray(rows.map { $0.message.anonymousId ?? "" }),
                .textArray(rows.map { $0.message.sessionId ?? "" }), .intArray(rows.map(\.message.timestamp)),
                .textArray(rows.map { $0.message.originalTimestamp ?? "" }),
                .textArray(rows.map { $0.message.sentAt.map(String.init) ?? "" }),
                .intArray(rows.map(\.message.receivedAt)), .textArray(rows.map(\.stored.payload)),
                .intArray(rows.map(\.stored.lifted.rawValue)),
            ]
        }

        /// The identity links as the four arrays ``sql`` binds ($14 … $17): source,
        /// anonymous id, user id, time of the merge.
        static func linkColumns(_ links: [IdentityLink]) -> [SQLValue] {
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
        /// (``personNumbers``, $18 and $19), and the events and the merges read them from
        /// `people` (a statement does not see the rows its own parts insert), the events by a hash join
        /// (a lookup per event was a seventh of PostgreSQL's time), kept in the request's order.
        static let sql = """
            WITH \(personNumbers), \
            inserted AS (INSERT INTO events (source, message_id, type, event, user_id, anonymous_id, session_id, timestamp, original_timestamp, sent_at, received_at, payload, lifted, person_key) \
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
            SELECT src, anon, u, r FROM unnest($14, $15, $16, $17) AS links(src, anon, u, r) \
            ON CONFLICT (source, anonymous_id) DO NOTHING RETURNING source, anonymous_id, user_id), \
            merged AS (INSERT INTO person_merges (anonymous_key, user_key) \
            SELECT -a.person_key, b.person_key FROM linked \
            JOIN people a ON a.source = linked.source AND a.person = linked.anonymous_id \
            JOIN people b ON b.source = linked.source AND b.person = linked.user_id \
            ON CONFLICT (anonymous_key) DO NOTHING) \
            SELECT source, message_id FROM inserted
            """

        /// Three parts of the ingest statement's WITH, the people bound as two arrays ($18: sources,
        /// $19: ids; each person once, sorted). `known` looks each one up (a probe of the unique index
        /// per person, written as a subquery so that the plan, prepared once, never becomes a scan of
        /// the table); `new_people` numbers the others; `people` is everyone with their number, for
        /// the events and the merges (a statement does not see the rows its own parts insert). A
        /// person another writer added after the statement's snapshot is a conflict: `DO UPDATE` (a
        /// no-op) waits for that writer and returns the row, where `DO NOTHING` would return nothing
        /// and leave the events without their number.
        private static let personNumbers = """
            known AS (SELECT s, p, (SELECT k.person_key FROM person_keys k WHERE k.source = t.s AND k.person = t.p) AS key \
            FROM unnest($18::text[], $19::text[]) AS t(s, p)), \
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
