import TouchpointCore

/// An anonymous id merged into a user: by an `identify` that carries both ids, or by an `alias`
/// (`previousId` → `userId`; its `anonymousId` when it has no `previousId`, as analytics-swift
/// sends an alias made before any user id). The first merge of an anonymous id wins.
struct IdentityLink: Sendable, Equatable {
    var source: String
    var anonymousId: String
    var userId: String
    var mergedAt: Int64

    /// The links the rows stored now make, in arrival order.
    static func links(of rows: [some EventRow], stored: [Bool]) -> [IdentityLink] {
        var links: [IdentityLink] = []
        for (row, isNew) in zip(rows, stored) where isNew {
            let message = row.message
            guard let userId = message.userId else { continue }
            let anonymousId: String?
            switch message.type {
            case .identify: anonymousId = message.anonymousId
            case .alias: anonymousId = previousId(of: message.payload) ?? message.anonymousId
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
