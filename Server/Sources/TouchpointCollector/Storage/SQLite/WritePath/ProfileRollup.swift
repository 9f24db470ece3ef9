import TouchpointCore

/// One user's share of the events a write stored: what their `profiles` row takes in (SQLite;
/// PostgreSQL's statement groups them itself, ``PostgresEventWriter/Insert``).
struct ProfileRollup: Sendable, Equatable {
    var source: String
    var userId: String
    var firstTimestamp: Int64
    var lastTimestamp: Int64
    var eventCount: Int64

    /// The users of the rows stored now (`stored`, one flag per row), ordered by (source, user id),
    /// the order in which writers lock their rows.
    static func rollups(of rows: [SQLiteEventWriter.Row], stored: [Bool]) -> [ProfileRollup] {
        var profiles: [ProfileRollup] = []
        var positions: [Key: Int] = [:]
        for (row, isNew) in zip(rows, stored) where isNew {
            guard let userId = row.message.userId else { continue }
            let key = Key(source: row.source, userId: userId)
            let timestamp = row.message.timestamp
            if let position = positions[key] {
                profiles[position].firstTimestamp = min(profiles[position].firstTimestamp, timestamp)
                profiles[position].lastTimestamp = max(profiles[position].lastTimestamp, timestamp)
                profiles[position].eventCount += 1
            } else {
                positions[key] = profiles.count
                profiles.append(
                    ProfileRollup(
                        source: row.source, userId: userId, firstTimestamp: timestamp, lastTimestamp: timestamp,
                        eventCount: 1))
            }
        }
        return profiles.sorted {
            (ExactText($0.source), ExactText($0.userId)) < (ExactText($1.source), ExactText($1.userId))
        }
    }

    private struct Key: Hashable {
        @ExactText var source: String
        @ExactText var userId: String
    }
}
