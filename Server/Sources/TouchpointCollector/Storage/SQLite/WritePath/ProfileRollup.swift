import TouchpointCore

/// One user's share of the events a write stored: what their `profiles` row takes in.
struct ProfileRollup: Sendable, Equatable {
    var source: String
    var userId: String
    var firstTimestamp: Int64
    var lastTimestamp: Int64
    var eventCount: Int64

    /// The users of the rows stored now (`stored`, one flag per row), ordered by (source, user id),
    /// the order in which writers lock their rows.
    static func rollups(of rows: [InsertCoalescer.Row], stored: [Bool]) -> [ProfileRollup] {
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
        return profiles.sorted { ($0.source, $0.userId) < ($1.source, $1.userId) }
    }

    private struct Key: Hashable {
        var source: String
        var userId: String
    }
}

/// An anonymous id merged into a user: by an `identify` that carries both ids, or by an `alias`
/// (`previousId` → `userId`). The first merge of an anonymous id wins.
struct IdentityLink: Sendable, Equatable {
    var source: String
    var anonymousId: String
    var userId: String
    var mergedAt: Int64

    /// The links the rows stored now make, in arrival order.
    static func links(of rows: [InsertCoalescer.Row], stored: [Bool]) -> [IdentityLink] {
        var links: [IdentityLink] = []
        for (row, isNew) in zip(rows, stored) where isNew {
            let message = row.message
            guard let userId = message.userId else { continue }
            let anonymousId: String?
            switch message.type {
            case .identify: anonymousId = message.anonymousId
            case .alias: anonymousId = previousId(of: message.payload)
            default: continue
            }
            guard let anonymousId, !anonymousId.isEmpty, anonymousId != userId else { continue }
            links.append(
                IdentityLink(
                    source: row.source, anonymousId: anonymousId, userId: userId, mergedAt: message.receivedAt))
        }
        return links
    }

    /// An alias call's `previousId` (its payload is parsed only here: alias calls are rare).
    static func previousId(of payload: String) -> String? {
        guard case .object(let members) = try? JSONParser.parse(payload) else { return nil }
        return members["previousId"]?.stringValue
    }
}
