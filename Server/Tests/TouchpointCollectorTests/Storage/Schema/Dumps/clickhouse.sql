CREATE TABLE events (
    source String,
    event String,
    type String,
    message_id String,
    time DateTime,
    time_ms UInt16,
    user_id String,
    anonymous_id String,
    session_id String,
    received_at DateTime,
    payload String,
    version UInt64,
    property_keys Array(String),
    property_texts Array(String),
    property_numbers Array(Float64),
    property_numeric Array(UInt8),
    person_hash UInt64 MATERIALIZED if(user_id != '', cityHash64(user_id), if(anonymous_id != '', cityHash64(anonymous_id), 0)),
    anonymous UInt8 MATERIALIZED user_id = '',
    person String ALIAS if(user_id != '', user_id, anonymous_id)
) ENGINE = ReplacingMergeTree(version) PARTITION BY toYYYYMM(time) ORDER BY (source, event, toDate(time), message_id) SETTINGS index_granularity = 8192;

CREATE TABLE resent_messages (
    source String,
    message_id String,
    time DateTime,
    time_ms UInt16
) ENGINE = MergeTree PARTITION BY toYYYYMM(time) ORDER BY (source, message_id) SETTINGS index_granularity = 8192;

CREATE TABLE retention_cuts (
    source String,
    before Int64
) ENGINE = ReplacingMergeTree(before) ORDER BY source SETTINGS index_granularity = 8192;

CREATE TABLE schema_migrations (
    version UInt32,
    applied_at DateTime
) ENGINE = MergeTree ORDER BY version SETTINGS index_granularity = 8192;
