CREATE TABLE arrivals (
    source text NOT NULL,
    minute bigint NOT NULL,
    events bigint NOT NULL
);

CREATE TABLE cohorts (
    id bigint NOT NULL GENERATED ALWAYS AS IDENTITY,
    source text NOT NULL,
    name text NOT NULL,
    definition text NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
);

CREATE TABLE configs (
    source text NOT NULL,
    kind text NOT NULL,
    body text NOT NULL,
    etag text NOT NULL,
    updated_at bigint NOT NULL
);

CREATE TABLE contexts (
    id bigint NOT NULL DEFAULT nextval('contexts_id_seq'::regclass),
    body text NOT NULL,
    events bigint NOT NULL
);

CREATE TABLE daily_people (
    source text NOT NULL,
    event text NOT NULL,
    day integer NOT NULL,
    chunk bigint NOT NULL,
    bits bytea NOT NULL
);

CREATE TABLE daily_people_changes (
    changes bigint NOT NULL
);

CREATE TABLE daily_people_state (
    source text NOT NULL,
    time_zone text NOT NULL,
    rebuild_through bigint NOT NULL,
    built_event text,
    built_minute bigint,
    built_seq bigint,
    complete bigint NOT NULL
);

CREATE TABLE dashboard_insights (
    dashboard_id bigint NOT NULL,
    insight_id bigint NOT NULL,
    position bigint NOT NULL
);

CREATE TABLE dashboards (
    id bigint NOT NULL GENERATED ALWAYS AS IDENTITY,
    source text NOT NULL,
    name text NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
);

CREATE TABLE definitions (
    source text NOT NULL,
    kind text NOT NULL,
    event text NOT NULL,
    property text NOT NULL,
    type text NOT NULL,
    events bigint NOT NULL,
    last_seen bigint NOT NULL
);

CREATE TABLE definitions_backfill (
    done bigint NOT NULL,
    last bigint NOT NULL
);

CREATE TABLE deletion_requests (
    id text NOT NULL,
    source text NOT NULL,
    body text NOT NULL,
    suppressing bigint NOT NULL,
    requested_at bigint NOT NULL,
    lifted_at bigint,
    redacted bigint NOT NULL DEFAULT 0
);

CREATE TABLE event_minutes (
    source text NOT NULL,
    event text NOT NULL,
    minute bigint NOT NULL,
    events bigint NOT NULL
);

CREATE TABLE event_minutes_backfill (
    done bigint NOT NULL,
    last bigint NOT NULL
);

CREATE TABLE events (
    seq bigint NOT NULL GENERATED ALWAYS AS IDENTITY,
    source text NOT NULL,
    message_id text NOT NULL,
    type text NOT NULL,
    event text,
    user_id text,
    anonymous_id text,
    session_id text,
    timestamp bigint NOT NULL,
    original_timestamp text,
    sent_at bigint,
    received_at bigint NOT NULL,
    payload text NOT NULL,
    lifted bigint NOT NULL DEFAULT 0,
    person_key bigint,
    context_id bigint
);

CREATE TABLE identities (
    source text NOT NULL,
    anonymous_id text NOT NULL,
    user_id text NOT NULL,
    merged_at bigint NOT NULL
);

CREATE TABLE insights (
    id bigint NOT NULL GENERATED ALWAYS AS IDENTITY,
    source text NOT NULL,
    name text NOT NULL,
    kind text NOT NULL,
    parameters text NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
);

CREATE TABLE person_keys (
    person_key bigint NOT NULL DEFAULT nextval('person_keys_person_key_seq'::regclass),
    source text NOT NULL,
    person text NOT NULL
);

CREATE TABLE person_merges (
    anonymous_key bigint NOT NULL,
    user_key bigint NOT NULL
);

CREATE TABLE profiles (
    source text NOT NULL,
    user_id text NOT NULL,
    first_seen bigint NOT NULL,
    last_seen bigint NOT NULL,
    event_count bigint NOT NULL
);

CREATE TABLE scenario_usage (
    source text NOT NULL,
    documents bigint NOT NULL,
    bytes bigint NOT NULL
);

CREATE TABLE scenarios (
    source text NOT NULL,
    namespace text NOT NULL,
    scenario_id text NOT NULL,
    body text NOT NULL,
    version bigint NOT NULL,
    updated_at bigint NOT NULL,
    bytes bigint NOT NULL DEFAULT 0
);

CREATE TABLE schema_migrations (
    version bigint NOT NULL,
    applied_at bigint NOT NULL
);

CREATE TABLE sessions (
    source text NOT NULL,
    session_id text NOT NULL,
    user_id text,
    anonymous_id text,
    first_timestamp bigint NOT NULL,
    last_timestamp bigint NOT NULL,
    event_count bigint NOT NULL
);

CREATE TABLE source_counts (
    source text NOT NULL,
    events bigint NOT NULL,
    sessions bigint NOT NULL
);

CREATE TABLE suppression_key (
    fingerprint text NOT NULL
);

CREATE TABLE suppressions (
    source text NOT NULL,
    kind text NOT NULL,
    id text NOT NULL,
    request_id text NOT NULL,
    hashed bigint NOT NULL DEFAULT 0
);

CREATE TABLE value_rollups (
    source text NOT NULL,
    property text NOT NULL,
    time_zone text NOT NULL,
    since_seq bigint NOT NULL,
    done bigint NOT NULL
);

ALTER TABLE cohorts ADD CONSTRAINT cohorts_pkey PRIMARY KEY (id);

ALTER TABLE configs ADD CONSTRAINT configs_pkey PRIMARY KEY (source, kind);

ALTER TABLE contexts ADD CONSTRAINT contexts_pkey PRIMARY KEY (id);

ALTER TABLE daily_people_state ADD CONSTRAINT daily_people_state_pkey PRIMARY KEY (source);

ALTER TABLE dashboard_insights ADD CONSTRAINT dashboard_insights_pkey PRIMARY KEY (dashboard_id, insight_id);

ALTER TABLE dashboards ADD CONSTRAINT dashboards_pkey PRIMARY KEY (id);

ALTER TABLE deletion_requests ADD CONSTRAINT deletion_requests_pkey PRIMARY KEY (id);

ALTER TABLE events ADD CONSTRAINT events_pkey PRIMARY KEY (seq);

ALTER TABLE identities ADD CONSTRAINT identities_pkey PRIMARY KEY (source, anonymous_id);

ALTER TABLE insights ADD CONSTRAINT insights_pkey PRIMARY KEY (id);

ALTER TABLE person_keys ADD CONSTRAINT person_keys_pkey PRIMARY KEY (person_key);

ALTER TABLE person_keys ADD CONSTRAINT person_keys_source_person_key UNIQUE (source, person);

ALTER TABLE person_merges ADD CONSTRAINT person_merges_pkey PRIMARY KEY (anonymous_key);

ALTER TABLE profiles ADD CONSTRAINT profiles_pkey PRIMARY KEY (source, user_id);

ALTER TABLE scenario_usage ADD CONSTRAINT scenario_usage_pkey PRIMARY KEY (source);

ALTER TABLE scenarios ADD CONSTRAINT scenarios_pkey PRIMARY KEY (source, namespace, scenario_id);

ALTER TABLE schema_migrations ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);

ALTER TABLE sessions ADD CONSTRAINT sessions_pkey PRIMARY KEY (source, session_id);

ALTER TABLE suppression_key ADD CONSTRAINT suppression_key_pkey PRIMARY KEY (fingerprint);

ALTER TABLE suppressions ADD CONSTRAINT suppressions_pkey PRIMARY KEY (source, kind, id);

ALTER TABLE value_rollups ADD CONSTRAINT value_rollups_pkey PRIMARY KEY (source, property);

CREATE INDEX arrivals_minute ON arrivals USING btree (source, minute);

CREATE UNIQUE INDEX contexts_body ON contexts USING btree (body);

CREATE INDEX daily_people_day ON daily_people USING btree (source, day);

CREATE INDEX daily_people_key ON daily_people USING btree (source, event, day, chunk);

CREATE INDEX definitions_key ON definitions USING btree (source, kind, event, property, type);

CREATE INDEX deletion_requests_source ON deletion_requests USING btree (source, requested_at);

CREATE INDEX event_minutes_key ON event_minutes USING btree (source, event, minute);

CREATE INDEX events_group ON events USING btree (source, user_id, seq) WHERE (type = 'group'::text);

CREATE INDEX events_identify ON events USING btree (source, user_id, seq) WHERE (type = 'identify'::text);

CREATE UNIQUE INDEX events_message ON events USING btree (source, message_id);

CREATE INDEX events_minute ON events USING btree (source, (("timestamp" / 60000)), seq, "timestamp");

CREATE INDEX events_name_minute ON events USING btree (source, event, (("timestamp" / 60000)), seq) INCLUDE ("timestamp", person_key);

CREATE INDEX events_session_arrival ON events USING btree (source, session_id, seq);

CREATE INDEX identities_user ON identities USING btree (source, user_id);

CREATE INDEX profiles_recent ON profiles USING btree (source, last_seen);

CREATE INDEX sessions_anonymous ON sessions USING btree (source, anonymous_id, last_timestamp);

CREATE INDEX sessions_recent ON sessions USING btree (source, last_timestamp);

CREATE INDEX sessions_user ON sessions USING btree (source, user_id, last_timestamp);

CREATE INDEX source_counts_source ON source_counts USING btree (source);

CREATE INDEX suppressions_request ON suppressions USING btree (request_id);
