CREATE TABLE arrivals (
    source TEXT NOT NULL,
    minute INTEGER NOT NULL,
    events INTEGER NOT NULL,
    PRIMARY KEY (source, minute)
) WITHOUT ROWID;

CREATE TABLE cohorts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    source TEXT NOT NULL,
    name TEXT NOT NULL,
    definition TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE configs (
    source TEXT NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    etag TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (source, kind)
);

CREATE TABLE contexts (id INTEGER PRIMARY KEY, body TEXT NOT NULL, events INTEGER NOT NULL);

CREATE TABLE daily_people (
    source TEXT NOT NULL,
    event TEXT NOT NULL,
    day INTEGER NOT NULL,
    chunk INTEGER NOT NULL,
    bits BLOB NOT NULL,
    PRIMARY KEY (source, event, day, chunk)
) WITHOUT ROWID;

CREATE TABLE daily_people_changes (changes INTEGER NOT NULL);

CREATE TABLE daily_people_state (
    source TEXT PRIMARY KEY,
    time_zone TEXT NOT NULL,
    rebuild_through INTEGER NOT NULL,
    built_event TEXT,
    built_minute INTEGER,
    built_seq INTEGER,
    complete INTEGER NOT NULL
);

CREATE TABLE dashboard_insights (
    dashboard_id INTEGER NOT NULL,
    insight_id INTEGER NOT NULL,
    position INTEGER NOT NULL,
    PRIMARY KEY (dashboard_id, insight_id)
);

CREATE TABLE dashboards (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    source TEXT NOT NULL,
    name TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE definitions (
    source TEXT NOT NULL,
    kind TEXT NOT NULL,
    event TEXT NOT NULL,
    property TEXT NOT NULL,
    type TEXT NOT NULL,
    events INTEGER NOT NULL,
    last_seen INTEGER NOT NULL,
    PRIMARY KEY (source, kind, event, property, type)
) WITHOUT ROWID;

CREATE TABLE definitions_backfill (done INTEGER NOT NULL, last INTEGER NOT NULL);

CREATE TABLE deletion_requests (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    body TEXT NOT NULL,
    suppressing INTEGER NOT NULL,
    requested_at INTEGER NOT NULL,
    lifted_at INTEGER
, redacted INTEGER NOT NULL DEFAULT 0);

CREATE TABLE event_minutes (
    source TEXT NOT NULL,
    event TEXT NOT NULL,
    minute INTEGER NOT NULL,
    events INTEGER NOT NULL,
    PRIMARY KEY (source, event, minute)
) WITHOUT ROWID;

CREATE TABLE event_minutes_backfill (done INTEGER NOT NULL, last INTEGER NOT NULL);

CREATE TABLE events (
    seq INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    message_id TEXT NOT NULL,
    type TEXT NOT NULL,
    event TEXT,
    user_id TEXT,
    anonymous_id TEXT,
    session_id TEXT,
    timestamp INTEGER NOT NULL,
    original_timestamp TEXT,
    sent_at INTEGER,
    received_at INTEGER NOT NULL,
    payload TEXT NOT NULL
, session_key INTEGER, lifted INTEGER NOT NULL DEFAULT 0, person_key INTEGER, context_id INTEGER);

CREATE TABLE identities (
    source TEXT NOT NULL,
    anonymous_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    merged_at INTEGER NOT NULL,
    PRIMARY KEY (source, anonymous_id)
);

CREATE TABLE insights (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    source TEXT NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    parameters TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE message_keys (
    key INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (key, seq)
) WITHOUT ROWID;

CREATE TABLE person_keys (person_key INTEGER PRIMARY KEY, source TEXT NOT NULL, person TEXT NOT NULL, UNIQUE (source, person));

CREATE TABLE person_merges (anonymous_key INTEGER PRIMARY KEY, user_key INTEGER NOT NULL);

CREATE TABLE profiles (
    source TEXT NOT NULL,
    user_id TEXT NOT NULL,
    first_seen INTEGER NOT NULL,
    last_seen INTEGER NOT NULL,
    event_count INTEGER NOT NULL,
    PRIMARY KEY (source, user_id)
);

CREATE TABLE scenario_usage (
    source TEXT PRIMARY KEY,
    documents INTEGER NOT NULL,
    bytes INTEGER NOT NULL
);

CREATE TABLE scenarios (
    source TEXT NOT NULL,
    namespace TEXT NOT NULL,
    scenario_id TEXT NOT NULL,
    body TEXT NOT NULL,
    version INTEGER NOT NULL,
    updated_at INTEGER NOT NULL, bytes INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (source, namespace, scenario_id)
);

CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL);

CREATE TABLE session_keys (
    key INTEGER NOT NULL,
    session INTEGER NOT NULL,
    PRIMARY KEY (key, session)
) WITHOUT ROWID;

CREATE TABLE "sessions" (
    session_key INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    session_id TEXT NOT NULL,
    user_id TEXT,
    anonymous_id TEXT,
    first_timestamp INTEGER NOT NULL,
    last_timestamp INTEGER NOT NULL,
    event_count INTEGER NOT NULL,
    last_minute INTEGER
);

CREATE TABLE source_counts (source TEXT PRIMARY KEY, events INTEGER NOT NULL, sessions INTEGER NOT NULL);

CREATE TABLE sqlite_sequence(name,seq);

CREATE TABLE storage_settings (name TEXT PRIMARY KEY, value);

CREATE TABLE suppression_key (fingerprint TEXT PRIMARY KEY);

CREATE TABLE suppressions (
    source TEXT NOT NULL,
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    request_id TEXT NOT NULL, hashed INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (source, kind, id)
);

CREATE TABLE value_rollups (
    source TEXT NOT NULL,
    property TEXT NOT NULL,
    time_zone TEXT NOT NULL,
    since_seq INTEGER NOT NULL,
    done INTEGER NOT NULL,
    PRIMARY KEY (source, property)
);

CREATE UNIQUE INDEX contexts_body ON contexts (body);

CREATE INDEX daily_people_day ON daily_people (source, day);

CREATE INDEX deletion_requests_source ON deletion_requests (source, requested_at);

CREATE INDEX events_group ON events (source, user_id, seq) WHERE type = 'group';

CREATE INDEX events_identify ON events (source, user_id, seq) WHERE type = 'identify';

CREATE INDEX events_minute ON events (source, (timestamp / 60000));

CREATE INDEX events_name_minute ON events (source, event, (timestamp / 60000), seq, timestamp, person_key);

CREATE INDEX events_session_key ON events (session_key) WHERE session_key IS NOT NULL;

CREATE TRIGGER events_forget_key AFTER DELETE ON events BEGIN
    DELETE FROM message_keys
    WHERE key IN (touchpoint_message_key((SELECT value FROM storage_settings WHERE name = 'message_key_secret'), OLD.source, OLD.message_id), ((MIN(255, 1 + ((OLD.seq) >> 24)) << 56) | ((touchpoint_message_key((SELECT value FROM storage_settings WHERE name = 'message_key_secret'), OLD.source, OLD.message_id)) & 72057594037927935))) AND seq = OLD.seq;
END;

CREATE INDEX identities_user ON identities (source, user_id);

CREATE INDEX profiles_recent ON profiles (source, last_seen);

CREATE INDEX sessions_anonymous ON sessions (source, anonymous_id);

CREATE INDEX sessions_recent ON sessions (source, last_minute);

CREATE INDEX sessions_user ON sessions (source, user_id);

CREATE TRIGGER sessions_forget_key AFTER DELETE ON sessions BEGIN
    DELETE FROM session_keys
    WHERE key = touchpoint_message_key((SELECT value FROM storage_settings WHERE name = 'message_key_secret'), OLD.source, OLD.session_id) AND session = OLD.session_key;
END;

CREATE INDEX suppressions_request ON suppressions (request_id);
