/// One session's share of the events a write stored: what its `sessions` row takes in.
///
/// Events are taken in arrival order: the user id is the last one seen, the anonymous id the
/// first (the same rule the PostgreSQL statement applies with `ORDER BY seq`).
struct SessionRollup: Sendable, Equatable {
    var source: String
    var sessionId: String
    var userId: String?
    var anonymousId: String?
    var firstTimestamp: Int64
    var lastTimestamp: Int64
    var eventCount: Int64

    /// The sessions of the rows stored now (`stored`, one flag per row), ordered by (source, session id).
    static func rollups(of rows: [InsertCoalescer.Row], stored: [Bool]) -> [SessionRollup] {
        var sessions: [SessionRollup] = []
        var positions: [Key: Int] = [:]
        for (row, isNew) in zip(rows, stored) where isNew {
            guard let sessionId = row.message.sessionId else { continue }
            let session = Key(source: row.source, sessionId: sessionId)
            if let position = positions[session] {
                sessions[position].add(
                    userId: row.message.userId, anonymousId: row.message.anonymousId, timestamp: row.message.timestamp)
            } else {
                positions[session] = sessions.count
                sessions.append(
                    SessionRollup(
                        source: row.source, sessionId: sessionId, userId: row.message.userId,
                        anonymousId: row.message.anonymousId, firstTimestamp: row.message.timestamp,
                        lastTimestamp: row.message.timestamp, eventCount: 1))
            }
        }
        return sessions.sorted { ($0.source, $0.sessionId) < ($1.source, $1.sessionId) }
    }

    /// A session's identity: (source, session id).
    struct Key: Hashable {
        var source: String
        var sessionId: String
    }

    /// This session's identity.
    var key: Key { Key(source: source, sessionId: sessionId) }

    /// Takes in one more event of the session (fields, not the message: a message passed whole is
    /// copied, a retain per string).
    private mutating func add(userId: String?, anonymousId: String?, timestamp: Int64) {
        if let userId { self.userId = userId }
        if self.anonymousId == nil { self.anonymousId = anonymousId }
        firstTimestamp = min(firstTimestamp, timestamp)
        lastTimestamp = max(lastTimestamp, timestamp)
        eventCount += 1
    }
}
