@testable import TouchpointCollector

/// What collectors of older schemas wrote, for the tests of the migrations after them.
enum OlderSchemas {
    /// The columns of `events` that schema 1 made, which every collector since writes: rows
    /// inserted with only these are rows as a collector of schema 1 to 8 stored them.
    static let eventColumns =
        "source, message_id, type, event, user_id, anonymous_id, session_id, timestamp, original_timestamp, sent_at, received_at, payload"
}
