import Foundation
import Logging
import TouchpointCore

/// The versioned schema: each migration runs once, in order, recorded in `schema_migrations`.
///
/// A migration is never edited once released; a change to the schema is a new migration at the
/// end of the list. Each one holds the SQL it runs as text, never built by code that may change
/// since (a constant of the storage's, a function of the dialect's), so that what a released
/// migration does stays what it did; a test compares each database's migrated schema with a
/// committed dump. Collectors that start together against one PostgreSQL take turns (an advisory
/// lock), so each migration runs exactly once.
///
/// The tests of a migration migrate a database up to the version before it
/// (``migrate(_:logger:upTo:)``), write into it what a collector of that version wrote, and
/// migrate the rest.
enum SchemaMigrations {
    struct Migration: Sendable {
        let version: Int
        let summary: String
        let statements: @Sendable (SQLDialect) -> [String]
    }

    static let all: [Migration] = [
        Migration(version: 1, summary: "events, sessions, configs, scenarios") { dialect in
            let sequence =
                dialect == .sqlite ? "seq INTEGER PRIMARY KEY" : "seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
            let integer = dialect == .sqlite ? "INTEGER" : "BIGINT"
            return [
                """
                CREATE TABLE events (
                    \(sequence),
                    source TEXT NOT NULL,
                    message_id TEXT NOT NULL,
                    type TEXT NOT NULL,
                    event TEXT,
                    user_id TEXT,
                    anonymous_id TEXT,
                    session_id TEXT,
                    timestamp \(integer) NOT NULL,
                    original_timestamp TEXT,
                    sent_at \(integer),
                    received_at \(integer) NOT NULL,
                    payload TEXT NOT NULL
                )
                """,
                "CREATE UNIQUE INDEX events_message ON events (source, message_id)",
                "CREATE INDEX events_session ON events (source, session_id, timestamp)",
                "CREATE INDEX events_name ON events (source, event, timestamp)",
                """
                CREATE TABLE sessions (
                    source TEXT NOT NULL,
                    session_id TEXT NOT NULL,
                    user_id TEXT,
                    anonymous_id TEXT,
                    first_timestamp \(integer) NOT NULL,
                    last_timestamp \(integer) NOT NULL,
                    event_count \(integer) NOT NULL,
                    PRIMARY KEY (source, session_id)
                )
                """,
                "CREATE INDEX sessions_user ON sessions (source, user_id, last_timestamp)",
                "CREATE INDEX sessions_anonymous ON sessions (source, anonymous_id, last_timestamp)",
                "CREATE INDEX sessions_recent ON sessions (source, last_timestamp)",
            ]
                // SQLite kept `sessions` up to date with a trigger on each stored event (dropped
                // again by version 4).
                + (dialect == .sqlite
                    ? [
                        """
                        CREATE TRIGGER events_session AFTER INSERT ON events WHEN NEW.session_id IS NOT NULL BEGIN
                            INSERT INTO sessions
                                (source, session_id, user_id, anonymous_id, first_timestamp, last_timestamp, event_count)
                            VALUES (NEW.source, NEW.session_id, NEW.user_id, NEW.anonymous_id, NEW.timestamp, NEW.timestamp, 1)
                            ON CONFLICT (source, session_id) DO UPDATE SET
                                user_id = COALESCE(excluded.user_id, sessions.user_id),
                                anonymous_id = COALESCE(sessions.anonymous_id, excluded.anonymous_id),
                                first_timestamp = MIN(sessions.first_timestamp, excluded.first_timestamp),
                                last_timestamp = MAX(sessions.last_timestamp, excluded.last_timestamp),
                                event_count = sessions.event_count + 1;
                        END
                        """
                    ] : []) + [
                    """
                    CREATE TABLE configs (
                        source TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        body TEXT NOT NULL,
                        etag TEXT NOT NULL,
                        updated_at \(integer) NOT NULL,
                        PRIMARY KEY (source, kind)
                    )
                    """,
                    """
                    CREATE TABLE scenarios (
                        source TEXT NOT NULL,
                        namespace TEXT NOT NULL,
                        scenario_id TEXT NOT NULL,
                        body TEXT NOT NULL,
                        version \(integer) NOT NULL,
                        updated_at \(integer) NOT NULL,
                        PRIMARY KEY (source, namespace, scenario_id)
                    )
                    """,
                ]
        },
        Migration(version: 2, summary: "events by time, for the dashboard's activity chart") { _ in
            ["CREATE INDEX events_time ON events (source, timestamp)"]
        },
        Migration(version: 3, summary: "a session's events in arrival order") { _ in
            [
                "CREATE INDEX events_session_arrival ON events (source, session_id, seq)",
                "DROP INDEX IF EXISTS events_session",
            ]
        },
        Migration(version: 4, summary: "sessions updated once per write, not once per event") { dialect in
            // The storage now adds each write's events to their sessions in the same transaction
            // (see `SessionRollup`); the per-event trigger would count them twice.
            dialect == .sqlite ? ["DROP TRIGGER IF EXISTS events_session"] : []
        },
        Migration(version: 5, summary: "time indexes by minute, which new events append to") { _ in
            // Indexes on the exact time took each new event at a scattered place (events arrive with
            // timestamps spread over seconds to days), so every commit rewrote hundreds of index
            // pages. By minute and then arrival, new events go to the end of their minute's range.
            // The expression must match `SQLStatement.minuteExpression`.
            [
                "CREATE INDEX events_name_minute ON events (source, event, (timestamp / 60000), seq)",
                "CREATE INDEX events_minute ON events (source, (timestamp / 60000), seq, timestamp)",
                "DROP INDEX IF EXISTS events_name",
                "DROP INDEX IF EXISTS events_time",
            ]
        },
        Migration(version: 6, summary: "scenario documents' sizes and each source's totals, for quotas") { dialect in
            let integer = dialect == .sqlite ? "INTEGER" : "BIGINT"
            let octets = dialect == .sqlite ? "LENGTH(CAST(body AS BLOB))" : "OCTET_LENGTH(body)"
            return [
                "ALTER TABLE scenarios ADD COLUMN bytes \(integer) NOT NULL DEFAULT 0",
                "UPDATE scenarios SET bytes = \(octets)",
                """
                CREATE TABLE scenario_usage (
                    source TEXT PRIMARY KEY,
                    documents \(integer) NOT NULL,
                    bytes \(integer) NOT NULL
                )
                """,
                """
                INSERT INTO scenario_usage (source, documents, bytes)
                    SELECT source, COUNT(*), SUM(bytes) FROM scenarios GROUP BY source
                """,
            ]
        },
        Migration(version: 7, summary: "deletion requests and the ids they suppress") { dialect in
            let integer = dialect == .sqlite ? "INTEGER" : "BIGINT"
            return [
                """
                CREATE TABLE deletion_requests (
                    id TEXT PRIMARY KEY,
                    source TEXT NOT NULL,
                    body TEXT NOT NULL,
                    suppressing \(integer) NOT NULL,
                    requested_at \(integer) NOT NULL,
                    lifted_at \(integer)
                )
                """,
                "CREATE INDEX deletion_requests_source ON deletion_requests (source, requested_at)",
                """
                CREATE TABLE suppressions (
                    source TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    id TEXT NOT NULL,
                    request_id TEXT NOT NULL,
                    PRIMARY KEY (source, kind, id)
                )
                """,
                "CREATE INDEX suppressions_request ON suppressions (request_id)",
            ]
        },
        Migration(version: 8, summary: "people: per-user rollups, merged identities, identify and group calls by user")
        {
            dialect in
            let integer = dialect == .sqlite ? "INTEGER" : "BIGINT"
            // An alias call's `previousId` as text (PostgreSQL: a payload holding the escape \u0000,
            // which `json` does not read, read with U+FFFD in its place; chr(92) is the backslash).
            let previousId =
                dialect == .sqlite
                ? "CAST(json_extract(payload, '$.previousId') AS TEXT)"
                : "((CASE WHEN strpos(payload, chr(92) || 'u0000') > 0 THEN replace(payload, chr(92) || 'u0000', chr(92) || 'ufffd') ELSE payload END)::json #>> '{previousId}')"
            return [
                """
                CREATE TABLE profiles (
                    source TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    first_seen \(integer) NOT NULL,
                    last_seen \(integer) NOT NULL,
                    event_count \(integer) NOT NULL,
                    PRIMARY KEY (source, user_id)
                )
                """,
                "CREATE INDEX profiles_recent ON profiles (source, last_seen)",
                """
                CREATE TABLE identities (
                    source TEXT NOT NULL,
                    anonymous_id TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    merged_at \(integer) NOT NULL,
                    PRIMARY KEY (source, anonymous_id)
                )
                """,
                "CREATE INDEX identities_user ON identities (source, user_id)",
                // Small partial indexes: identify, group and alias calls are a sliver of the traffic.
                "CREATE INDEX events_identify ON events (source, user_id, seq) WHERE type = 'identify'",
                "CREATE INDEX events_group ON events (source, user_id, seq) WHERE type = 'group'",
                """
                INSERT INTO profiles (source, user_id, first_seen, last_seen, event_count)
                    SELECT source, user_id, MIN(timestamp), MAX(timestamp), COUNT(*) FROM events
                    WHERE user_id IS NOT NULL GROUP BY source, user_id
                """,
                // The first merge of an anonymous id wins (arrival order), as at ingest. (SQLite needs
                // the WHERE of an upsert's SELECT to parse its ON CONFLICT.)
                """
                INSERT INTO identities (source, anonymous_id, user_id, merged_at)
                    SELECT source, anonymous_id, user_id, received_at FROM events
                    WHERE type = 'identify' AND user_id IS NOT NULL AND anonymous_id IS NOT NULL
                    AND anonymous_id <> user_id ORDER BY seq
                    ON CONFLICT (source, anonymous_id) DO NOTHING
                """,
                """
                INSERT INTO identities (source, anonymous_id, user_id, merged_at)
                    SELECT source, \(previousId), user_id, received_at FROM events
                    WHERE type = 'alias' AND user_id IS NOT NULL AND \(previousId) IS NOT NULL
                    AND \(previousId) <> '' AND \(previousId) <> user_id ORDER BY seq
                    ON CONFLICT (source, anonymous_id) DO NOTHING
                """,
            ]
        },
        Migration(version: 9, summary: "SQLite: deduplication by 64-bit keys merged in key order, not a unique index") {
            dialect in
            // See `MessageKeyIndex`. PostgreSQL keeps its unique index: its writers are many and
            // concurrent, and the index is what makes them agree.
            guard dialect == .sqlite else { return [] }
            let secret = "(SELECT value FROM storage_settings WHERE name = 'message_key_secret')"
            return [
                "CREATE TABLE storage_settings (name TEXT PRIMARY KEY, value)",
                "INSERT INTO storage_settings (name, value) VALUES ('message_key_secret', randomblob(16))",
                """
                CREATE TABLE message_keys (
                    key INTEGER NOT NULL,
                    seq INTEGER NOT NULL,
                    PRIMARY KEY (key, seq)
                ) WITHOUT ROWID
                """,
                """
                INSERT INTO message_keys (key, seq)
                    SELECT touchpoint_message_key(\(secret), source, message_id), seq FROM events ORDER BY 1, 2
                """,
                """
                INSERT INTO storage_settings (name, value)
                    VALUES ('message_keys_merged_through', (SELECT COALESCE(MAX(seq), 0) FROM events))
                """,
                "DROP INDEX events_message",
                """
                CREATE TRIGGER events_forget_key AFTER DELETE ON events BEGIN
                    DELETE FROM message_keys
                    WHERE key = touchpoint_message_key(\(secret), OLD.source, OLD.message_id) AND seq = OLD.seq;
                END
                """,
            ]
        },
        Migration(
            version: 10, summary: "SQLite: a session's events by the session's rowid; sessions by user without time"
        ) {
            dialect in
            // Indexed by session id, a session's new events went to a random place in the index
            // (ids are random, hundreds of sessions are open at once), a page per event and
            // commit: with web traffic, ingest ran at 57k events/s with the index and 85k without.
            // By the session's rowid (creation order) the open sessions' entries sit together at
            // the end. Sessions by user or anonymous id no longer carry the last time, which
            // changes with every write of the session and moved its entries each time.
            guard dialect == .sqlite else { return [] }
            return [
                "ALTER TABLE events ADD COLUMN session_key INTEGER",
                """
                UPDATE events SET session_key = (SELECT rowid FROM sessions
                    WHERE sessions.source = events.source AND sessions.session_id = events.session_id)
                WHERE session_id IS NOT NULL
                """,
                "CREATE INDEX events_session_key ON events (session_key, seq) WHERE session_key IS NOT NULL",
                "DROP INDEX events_session_arrival",
                "DROP INDEX sessions_user",
                "CREATE INDEX sessions_user ON sessions (source, user_id)",
                "DROP INDEX sessions_anonymous",
                "CREATE INDEX sessions_anonymous ON sessions (source, anonymous_id)",
            ]
        },
        Migration(version: 11, summary: "payloads stored without the members their columns hold") { dialect in
            // See `StoredPayload`. Rows stored before keep their whole payload (lifted = 0).
            let integer = dialect == .sqlite ? "INTEGER" : "BIGINT"
            return ["ALTER TABLE events ADD COLUMN lifted \(integer) NOT NULL DEFAULT 0"]
        },
        Migration(version: 12, summary: "analytics: a small integer per person, in the name-and-minute index") {
            dialect in
            // See `PersonKeys`. Trends, funnels and retention counted people by their id strings,
            // each event's merged user found by a join on the anonymous id, reading every event
            // row; now they read the name-and-minute index alone and count integers.
            let key = dialect == .sqlite ? "person_key INTEGER PRIMARY KEY" : "person_key BIGSERIAL PRIMARY KEY"
            let integer = dialect == .sqlite ? "INTEGER" : "BIGINT"
            let index =
                dialect == .sqlite
                ? "CREATE INDEX events_name_minute ON events (source, event, (timestamp / 60000), seq, timestamp, person_key)"
                : "CREATE INDEX events_name_minute ON events (source, event, (timestamp / 60000), seq) INCLUDE (timestamp, person_key)"
            return [
                "CREATE TABLE person_keys (\(key), source TEXT NOT NULL, person TEXT NOT NULL, UNIQUE (source, person))",
                "CREATE TABLE person_merges (anonymous_key \(integer) PRIMARY KEY, user_key \(integer) NOT NULL)",
                "ALTER TABLE events ADD COLUMN person_key \(integer)",
                """
                INSERT INTO person_keys (source, person)
                    SELECT source, person FROM (
                        SELECT source, COALESCE(user_id, anonymous_id) AS person FROM events
                        UNION SELECT source, user_id FROM identities
                        UNION SELECT source, anonymous_id FROM identities
                    ) ids WHERE person IS NOT NULL ORDER BY source, person
                """,
                """
                UPDATE events SET person_key = (SELECT CASE WHEN events.user_id IS NULL THEN -k.person_key
                    ELSE k.person_key END FROM person_keys k
                    WHERE k.source = events.source AND k.person = COALESCE(events.user_id, events.anonymous_id))
                WHERE user_id IS NOT NULL OR anonymous_id IS NOT NULL
                """,
                """
                INSERT INTO person_merges (anonymous_key, user_key)
                    SELECT -a.person_key, u.person_key FROM identities i
                    JOIN person_keys a ON a.source = i.source AND a.person = i.anonymous_id
                    JOIN person_keys u ON u.source = i.source AND u.person = i.user_id
                """,
                "DROP INDEX events_name_minute",
                index,
            ]
        },
        Migration(version: 13, summary: "each source's count of events and sessions, kept by the writes") { dialect in
            // See `SourceCounts`. Counting them took a pass over an index of every event: 16
            // minutes for 54 million events with a cold cache. SQLite keeps one row per source (one writer); PostgreSQL
            // adds a row per write, summed when read and folded now and then (a row that every
            // write updated would make concurrent writes wait for each other's commits).
            let table =
                dialect == .sqlite
                ? "CREATE TABLE source_counts (source TEXT PRIMARY KEY, events INTEGER NOT NULL, sessions INTEGER NOT NULL)"
                : "CREATE TABLE source_counts (source TEXT NOT NULL, events BIGINT NOT NULL, sessions BIGINT NOT NULL)"
            return [table]
                + (dialect == .sqlite ? [] : ["CREATE INDEX source_counts_source ON source_counts (source)"])
                + [
                    """
                    INSERT INTO source_counts (source, events, sessions)
                        SELECT source, SUM(events), SUM(sessions) FROM (
                            SELECT source, COUNT(*) AS events, 0 AS sessions FROM events GROUP BY source
                            UNION ALL SELECT source, 0, COUNT(*) FROM sessions GROUP BY source
                        ) counted GROUP BY source
                    """
                ]
        },
        Migration(version: 14, summary: "contexts kept once, not in every event") { dialect in
            // See `SharedContexts`. Events stored before keep their whole context (context_id NULL).
            // PostgreSQL has the table and column too (the reads name them) but keeps contexts inline.
            let key = dialect == .sqlite ? "id INTEGER PRIMARY KEY" : "id BIGSERIAL PRIMARY KEY"
            let integer = dialect == .sqlite ? "INTEGER" : "BIGINT"
            return [
                "CREATE TABLE contexts (\(key), body TEXT NOT NULL, events \(integer) NOT NULL)",
                "CREATE UNIQUE INDEX contexts_body ON contexts (body)",
                "ALTER TABLE events ADD COLUMN context_id \(integer)",
            ]
        },
        Migration(version: 15, summary: "SQLite: events' message and session ids kept in 16 bytes when they are UUIDs")
        {
            _ in
            // See `PackedID`. Nothing to change: rows stored before keep their ids as text, which
            // every read takes as it takes a packed one. The version keeps builds that would read a
            // packed id as text away from the store.
            []
        },
        Migration(
            version: 16,
            summary:
                "SQLite: payloads of only properties kept as that object; minute and session indexes without seq; sessions' ids in 16 bytes"
        ) { dialect in
            // An entry of an index of a rowid table ends with the rowid: `seq` named in the index too
            // was kept twice (5 bytes an entry). By (source, minute) and by session_key alone the
            // entries are in the same order, (minute, seq) and (session_key, seq). The minute index
            // no longer holds the exact time either: a query reads it from the row only for the
            // first and last minute of its range (`appendRange`). Payloads stored before keep
            // their shape (no `properties` bit); the version keeps older builds, which would read
            // such a payload as the whole message, away from the store. Rebuilding the two
            // indexes reads every event once. A session's id that spells a UUID is kept in 16
            // bytes as its events' are (`PackedID`); the rows there are rewritten, since a session
            // is found by its id as stored.
            guard dialect == .sqlite else { return [] }
            return [
                "UPDATE sessions SET session_id = touchpoint_packed_id(session_id) WHERE typeof(session_id) = 'text' AND length(session_id) = 36",
                "DROP INDEX events_minute",
                "CREATE INDEX events_minute ON events (source, (timestamp / 60000))",
                "DROP INDEX events_session_key",
                "CREATE INDEX events_session_key ON events (session_key) WHERE session_key IS NOT NULL",
            ]
        },
        Migration(version: 17, summary: "SQLite: message keys merged by era, so a merge rewrites one era's pages") {
            dialect in
            // See `MessageKeyIndex`: a key merged from now on is stored with its event's era in the
            // top byte. Keys merged before stay as they are (rewriting them would read and sort the
            // whole table); lookups seek them as they are too while the setting says there are any.
            // The trigger forgets a deleted event's key in either form (matched on the seq too).
            guard dialect == .sqlite else { return [] }
            let secret = "(SELECT value FROM storage_settings WHERE name = 'message_key_secret')"
            let key = "touchpoint_message_key(\(secret), OLD.source, OLD.message_id)"
            return [
                """
                INSERT OR REPLACE INTO storage_settings (name, value) SELECT 'message_keys_raw_through', value
                    FROM storage_settings WHERE name = 'message_keys_merged_through'
                """,
                "DROP TRIGGER events_forget_key",
                """
                CREATE TRIGGER events_forget_key AFTER DELETE ON events BEGIN
                    DELETE FROM message_keys
                    WHERE key IN (\(key), ((MIN(255, 1 + ((OLD.seq) >> 24)) << 56) | ((\(key)) & 72057594037927935))) AND seq = OLD.seq;
                END
                """,
            ]
        },
        Migration(version: 18, summary: "SQLite: recent sessions indexed by the minute of their last event") {
            dialect in
            // See `SessionRows`: a write added to a session's row moved its entry in the index by
            // its last event's time every time (a delete and an insert in a B-tree per session a
            // write touched, SQLite rewriting an index entry whether or not its value changed).
            // By the minute, in a column of its own that a write sets only when the minute
            // changes, the entry stays put for most writes. The queries order and filter by the
            // minute, then by the exact time. Rewrites every sessions row once.
            guard dialect == .sqlite else { return [] }
            return [
                "DROP INDEX sessions_recent",
                "ALTER TABLE sessions ADD COLUMN last_minute INTEGER",
                "UPDATE sessions SET last_minute = last_timestamp / 60000",
                "CREATE INDEX sessions_recent ON sessions (source, last_minute)",
            ]
        },
        Migration(version: 19, summary: "SQLite: sessions found by 64-bit keys merged in key order, not a unique index")
        {
            dialect in
            // See `SessionKeys`. The table is made again without its primary key on (source,
            // session_id), each row keeping its rowid, now a column of its own (`session_key`,
            // which `events.session_key` holds and which a rebuild of the file would otherwise be
            // free to renumber). Every session's key is merged now. PostgreSQL keeps its unique
            // index, as for message ids.
            guard dialect == .sqlite else { return [] }
            let secret = "(SELECT value FROM storage_settings WHERE name = 'message_key_secret')"
            return [
                """
                CREATE TABLE sessions_keyed (
                    session_key INTEGER PRIMARY KEY,
                    source TEXT NOT NULL,
                    session_id TEXT NOT NULL,
                    user_id TEXT,
                    anonymous_id TEXT,
                    first_timestamp INTEGER NOT NULL,
                    last_timestamp INTEGER NOT NULL,
                    event_count INTEGER NOT NULL,
                    last_minute INTEGER
                )
                """,
                """
                INSERT INTO sessions_keyed (session_key, source, session_id, user_id, anonymous_id, first_timestamp, \
                last_timestamp, event_count, last_minute) SELECT rowid, source, session_id, user_id, anonymous_id, \
                first_timestamp, last_timestamp, event_count, last_minute FROM sessions ORDER BY rowid
                """,
                "DROP TABLE sessions",
                "ALTER TABLE sessions_keyed RENAME TO sessions",
                "CREATE INDEX sessions_user ON sessions (source, user_id)",
                "CREATE INDEX sessions_anonymous ON sessions (source, anonymous_id)",
                "CREATE INDEX sessions_recent ON sessions (source, last_minute)",
                """
                CREATE TABLE session_keys (
                    key INTEGER NOT NULL,
                    session INTEGER NOT NULL,
                    PRIMARY KEY (key, session)
                ) WITHOUT ROWID
                """,
                """
                INSERT INTO session_keys (key, session)
                    SELECT touchpoint_message_key(\(secret), source, session_id), session_key FROM sessions ORDER BY 1, 2
                """,
                """
                INSERT OR REPLACE INTO storage_settings (name, value)
                    VALUES ('session_keys_merged_through', (SELECT COALESCE(MAX(session_key), 0) FROM sessions))
                """,
                """
                CREATE TRIGGER sessions_forget_key AFTER DELETE ON sessions BEGIN
                    DELETE FROM session_keys
                    WHERE key = touchpoint_message_key(\(secret), OLD.source, OLD.session_id) AND session = OLD.session_key;
                END
                """,
            ]
        },
        Migration(version: 20, summary: "people per event and day, kept at ingest; suppressed ids kept as keyed hashes")
        { dialect in
            // See `DailyPeopleRollup`. The rollup starts empty: the collector builds it from the
            // stored events in the background (`DailyPeopleBackfill`), and each source's row of
            // `daily_people_state` says how far that is. SQLite's one writer updates a chunk in
            // place; PostgreSQL's writes run in parallel, so each adds rows of its own, which
            // reads OR together and a fold merges now and then (as `source_counts`).
            let integer = dialect == .sqlite ? "INTEGER" : "BIGINT"
            let rollup =
                dialect == .sqlite
                ? [
                    """
                    CREATE TABLE daily_people (
                        source TEXT NOT NULL,
                        event TEXT NOT NULL,
                        day INTEGER NOT NULL,
                        chunk INTEGER NOT NULL,
                        bits BLOB NOT NULL,
                        PRIMARY KEY (source, event, day, chunk)
                    ) WITHOUT ROWID
                    """
                ]
                : [
                    """
                    CREATE TABLE daily_people (
                        source TEXT NOT NULL,
                        event TEXT NOT NULL,
                        day INTEGER NOT NULL,
                        chunk BIGINT NOT NULL,
                        bits BYTEA NOT NULL
                    )
                    """,
                    "CREATE INDEX daily_people_key ON daily_people (source, event, day, chunk)",
                ]
            return rollup + [
                "CREATE INDEX daily_people_day ON daily_people (source, day)",
                """
                CREATE TABLE daily_people_state (
                    source TEXT PRIMARY KEY,
                    time_zone TEXT NOT NULL,
                    rebuild_through \(integer) NOT NULL,
                    built_event TEXT,
                    built_minute \(integer),
                    built_seq \(integer),
                    complete \(integer) NOT NULL
                )
                """,
                "CREATE TABLE daily_people_changes (changes \(integer) NOT NULL)",
                "INSERT INTO daily_people_changes (changes) VALUES (0)",
                // Ids written before this version are hashed by the collector at its next start
                // (`SuppressionKey`), which needs the key in the data directory.
                "ALTER TABLE suppressions ADD COLUMN hashed \(integer) NOT NULL DEFAULT 0",
                "ALTER TABLE deletion_requests ADD COLUMN redacted \(integer) NOT NULL DEFAULT 0",
                // Which key the hashes were made with (`SuppressionKey.fingerprint`): a collector
                // given another key refuses to start rather than stop recognising the ids.
                "CREATE TABLE suppression_key (fingerprint TEXT PRIMARY KEY)",
            ]
        },
        Migration(
            version: 21,
            summary: "the event names, properties and traits each source has stored, and events per minute of arrival"
        ) { dialect in
            // See `DefinitionCounts` and `ArrivalCounts`. SQLite keeps a row per key, which its one
            // writer updates; PostgreSQL's writers each add rows of their own (summed when read,
            // folded now and then): a row that every write updated would make them wait for each
            // other's commits. The events stored before are counted in the background
            // (`DefinitionsBackfill`), from the oldest, up to the newest event now: the table
            // below says how far it got.
            let integer = dialect == .sqlite ? "INTEGER" : "BIGINT"
            let sqlite = dialect == .sqlite
            return [
                """
                CREATE TABLE definitions (
                    source TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    event TEXT NOT NULL,
                    property TEXT NOT NULL,
                    type TEXT NOT NULL,
                    events \(integer) NOT NULL,
                    last_seen \(integer) NOT NULL\(sqlite ? ",\n    PRIMARY KEY (source, kind, event, property, type)" : "")
                )\(sqlite ? " WITHOUT ROWID" : "")
                """,
                """
                CREATE TABLE arrivals (
                    source TEXT NOT NULL,
                    minute \(integer) NOT NULL,
                    events \(integer) NOT NULL\(sqlite ? ",\n    PRIMARY KEY (source, minute)" : "")
                )\(sqlite ? " WITHOUT ROWID" : "")
                """,
                "CREATE TABLE definitions_backfill (done \(integer) NOT NULL, last \(integer) NOT NULL)",
                "INSERT INTO definitions_backfill (done, last) SELECT 0, COALESCE(MAX(seq), 0) FROM events",
            ]
                + (sqlite
                    ? []
                    : [
                        "CREATE INDEX definitions_key ON definitions (source, kind, event, property, type)",
                        "CREATE INDEX arrivals_minute ON arrivals (source, minute)",
                    ])
        },
        Migration(version: 22, summary: "saved cohorts, insights and dashboards") { dialect in
            // See `SavedLibrary`. Small tables a person writes to, read by source and by number;
            // an insight's parameters are its query string, a dashboard's insights rows in order.
            // A number is never given twice (AUTOINCREMENT; an identity), so a link to something
            // deleted finds nothing rather than what was saved after it.
            let key =
                dialect == .sqlite
                ? "id INTEGER PRIMARY KEY AUTOINCREMENT" : "id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
            let integer = dialect == .sqlite ? "INTEGER" : "BIGINT"
            return [
                """
                CREATE TABLE cohorts (
                    \(key),
                    source TEXT NOT NULL,
                    name TEXT NOT NULL,
                    definition TEXT NOT NULL,
                    created_at \(integer) NOT NULL,
                    updated_at \(integer) NOT NULL
                )
                """,
                """
                CREATE TABLE insights (
                    \(key),
                    source TEXT NOT NULL,
                    name TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    parameters TEXT NOT NULL,
                    created_at \(integer) NOT NULL,
                    updated_at \(integer) NOT NULL
                )
                """,
                """
                CREATE TABLE dashboards (
                    \(key),
                    source TEXT NOT NULL,
                    name TEXT NOT NULL,
                    created_at \(integer) NOT NULL,
                    updated_at \(integer) NOT NULL
                )
                """,
                """
                CREATE TABLE dashboard_insights (
                    dashboard_id \(integer) NOT NULL,
                    insight_id \(integer) NOT NULL,
                    position \(integer) NOT NULL,
                    PRIMARY KEY (dashboard_id, insight_id)
                )
                """,
            ]
        },
        Migration(version: 23, summary: "events per name and minute of their time") { dialect in
            // See `EventMinutes`. SQLite keeps a row per key, which its one writer updates;
            // PostgreSQL's writers each add rows of their own (summed when read, folded now and
            // then). The events stored before are counted in the background, from the oldest, up
            // to the newest event now: the table below says how far it got.
            let integer = dialect == .sqlite ? "INTEGER" : "BIGINT"
            let sqlite = dialect == .sqlite
            return [
                """
                CREATE TABLE event_minutes (
                    source TEXT NOT NULL,
                    event TEXT NOT NULL,
                    minute \(integer) NOT NULL,
                    events \(integer) NOT NULL\(sqlite ? ",\n    PRIMARY KEY (source, event, minute)" : "")
                )\(sqlite ? " WITHOUT ROWID" : "")
                """,
                "CREATE TABLE event_minutes_backfill (done \(integer) NOT NULL, last \(integer) NOT NULL)",
                "INSERT INTO event_minutes_backfill (done, last) SELECT 0, COALESCE(MAX(seq), 0) FROM events",
            ] + (sqlite ? [] : ["CREATE INDEX event_minutes_key ON event_minutes (source, event, minute)"])
        },
        Migration(version: 24, summary: "the properties a breakdown's rollup keeps") { dialect in
            // See `ValueRollup`: the values' rows are rows of `event_minutes` and `daily_people`;
            // this says, per source and property, in which zone, from which event on ingest counts
            // them, and how far the count of the events stored before got (`done`).
            // A source's value sources are found by a range of `source` that begins with its id,
            // which needs text ordered by its bytes: SQLite's is, PostgreSQL's default collation
            // may order by language (ICU, glibc locales ignore control characters), so there the
            // two columns are ordered by bytes (equality is the same either way).
            let integer = dialect == .sqlite ? "INTEGER" : "BIGINT"
            let bytewise =
                dialect == .sqlite
                ? []
                : [
                    "ALTER TABLE event_minutes ALTER COLUMN source TYPE TEXT COLLATE \"C\"",
                    "ALTER TABLE daily_people ALTER COLUMN source TYPE TEXT COLLATE \"C\"",
                ]
            return bytewise + [
                """
                CREATE TABLE value_rollups (
                    source TEXT NOT NULL,
                    property TEXT NOT NULL,
                    time_zone TEXT NOT NULL,
                    since_seq \(integer) NOT NULL,
                    done \(integer) NOT NULL,
                    PRIMARY KEY (source, property)
                )
                """
            ]
        },
    ]

    /// The newest schema version this build knows.
    static var latestVersion: Int { all.last?.version ?? 0 }

    /// Brings the schema up to date, or up to version `last`, saying each migration it applies to
    /// `logger` first (one that reads every stored event takes minutes on a store of tens of
    /// millions).
    /// - Parameter last: the newest version to apply (a collector: ``latestVersion``; a test of a
    ///   migration: the version before it).
    /// - Returns: the versions applied now (empty when the schema was at `last` or past it).
    /// - Throws: ``StorageError`` with code `migration` when the database is newer than this build.
    @discardableResult
    static func migrate(_ backend: any SQLBackend, logger: Logger? = nil, upTo last: Int = latestVersion)
        async throws -> [Int]
    {
        let integer = backend.dialect == .sqlite ? "INTEGER" : "BIGINT"
        return try await backend.withSchemaLock { transaction in
            _ = try await transaction.query(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version \(integer) PRIMARY KEY, applied_at \(integer) NOT NULL)",
                [])
            let rows = try await transaction.query("SELECT version FROM schema_migrations", [])
            let applied = Set(rows.compactMap { $0.first?.int }.map(Int.init))
            if let newest = applied.max(), newest > latestVersion {
                throw StorageError(
                    code: .migration,
                    message: "the database has schema version \(newest); this collector knows up to \(latestVersion)")
            }
            var now: [Int] = []
            let timestamp = Timestamp.milliseconds(Date.now)
            for migration in all where migration.version <= last && !applied.contains(migration.version) {
                if !applied.isEmpty {
                    logger?.info(
                        "applying schema migration \(migration.version): \(migration.summary)",
                        metadata: ["database": "\(backend.dialect.rawValue)"])
                }
                for statement in migration.statements(backend.dialect) {
                    _ = try await transaction.query(statement, [])
                }
                var record = SQLStatement(
                    backend.dialect, "INSERT INTO schema_migrations (version, applied_at) VALUES ")
                record.bindTuple([.int(Int64(migration.version)), .int(timestamp)])
                _ = try await transaction.query(record)
                now.append(migration.version)
            }
            return now
        }
    }
}
