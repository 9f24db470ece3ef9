/// One session's share of the events a write stored: what its `sessions` row takes in.
///
/// Events are taken in arrival order: the user id is the last one seen, the anonymous id the
/// first (the same rule the PostgreSQL statement applies with `ORDER BY seq`).
struct SessionRollup: Sendable, Equatable {
    var key: Key
    /// The session id packed as SQLite keeps it (nil: not a UUID, kept as text), worked out with the key.
    var packedId: PackedID.Bytes?
    var userId: String?
    var anonymousId: String?
    var firstTimestamp: Int64
    var lastTimestamp: Int64
    var eventCount: Int64

    /// The sessions of the rows stored now (`stored`, one flag per row), ordered by (source,
    /// session id); and per row, the place of its session among them (nil for a row not stored
    /// now or without a session), so that the writer finds a row's session without hashing its
    /// key again.
    static func grouped(_ rows: [SQLiteEventWriter.Row], stored: [Bool]) -> (sessions: [SessionRollup], ofRow: [Int?]) {
        var sessions: [SessionRollup] = []
        var ofRow = [Int?](repeating: nil, count: rows.count)
        var positions: [Key: Int] = [:]
        for (index, (row, isNew)) in zip(rows, stored).enumerated() where isNew {
            guard let session = row.session else { continue }
            if let position = positions[session] {
                ofRow[index] = position
                sessions[position].add(
                    userId: row.message.userId, anonymousId: row.message.anonymousId, timestamp: row.message.timestamp)
            } else {
                positions[session] = sessions.count
                ofRow[index] = sessions.count
                sessions.append(
                    SessionRollup(
                        key: session, packedId: row.packedSessionId, userId: row.message.userId,
                        anonymousId: row.message.anonymousId, firstTimestamp: row.message.timestamp,
                        lastTimestamp: row.message.timestamp, eventCount: 1))
            }
        }
        // Sorted, with each row's place followed to its session's new one.
        let order = sessions.indices.sorted {
            (sessions[$0].source, sessions[$0].sessionId) < (sessions[$1].source, sessions[$1].sessionId)
        }
        var place = [Int](repeating: 0, count: sessions.count)
        for (sortedPlace, position) in order.enumerated() { place[position] = sortedPlace }
        return (order.map { sessions[$0] }, ofRow.map { $0.map { place[$0] } })
    }

    /// A session's identity: (source, session id), hashed once, on the request's task.
    typealias Key = SourcedID

    var source: String { key.source }
    var sessionId: String { key.id }

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
