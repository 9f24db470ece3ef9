import Foundation
import TouchpointCore

extension StoredEvent {
    /// The event as the query API returns it.
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "messageId": .string(messageId),
            "type": .string(type),
            "timestamp": .string(Timestamp.format(timestamp)),
            "receivedAt": .string(Timestamp.format(receivedAt)),
            "properties": .object(properties),
            "context": .object(context),
        ]
        if let name { members["event"] = .string(name) }
        if let userId { members["userId"] = .string(userId) }
        if let anonymousId { members["anonymousId"] = .string(anonymousId) }
        if let sessionId { members["sessionId"] = .string(sessionId) }
        if let originalTimestamp { members["originalTimestamp"] = .string(originalTimestamp) }
        if let sentAt { members["sentAt"] = .string(Timestamp.format(sentAt)) }
        return .object(members)
    }
}

extension SessionSummary {
    /// The session as the query API returns it.
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "sessionId": .string(sessionId),
            "firstTimestamp": .string(Timestamp.format(firstTimestamp)),
            "lastTimestamp": .string(Timestamp.format(lastTimestamp)),
            "eventCount": .int(eventCount),
        ]
        if let userId { members["userId"] = .string(userId) }
        if let anonymousId { members["anonymousId"] = .string(anonymousId) }
        return .object(members)
    }
}

extension SurveyResult {
    /// The result as the query API returns it.
    public var json: JSONValue {
        .object([
            "surveyId": .string(surveyId),
            "presented": .int(presented),
            "responded": .int(responded),
            "dismissed": .int(dismissed),
            "choices": .object(choices.mapValues { .int($0) }),
            "textAnswers": .int(textAnswers),
            "responseRate": responseRate.map(JSONValue.double) ?? .null,
        ])
    }
}

extension SurveyTextAnswer {
    /// The answer as the query API returns it.
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "text": .string(text), "timestamp": .string(Timestamp.format(timestamp)), "messageId": .string(messageId),
        ]
        if let userId { members["userId"] = .string(userId) }
        if let anonymousId { members["anonymousId"] = .string(anonymousId) }
        if let sessionId { members["sessionId"] = .string(sessionId) }
        return .object(members)
    }
}

extension PromoResult {
    /// The result as the query API returns it.
    public var json: JSONValue {
        .object([
            "appID": .string(appID),
            "impressions": .int(impressions),
            "taps": .int(taps),
            "clickThrough": clickThrough.map(JSONValue.double) ?? .null,
            "byPromotingApp": .object(
                byPromotingApp.mapValues { counts in
                    .object([
                        "impressions": .int(counts.impressions), "taps": .int(counts.taps),
                        "clickThrough": counts.clickThrough.map(JSONValue.double) ?? .null,
                    ])
                }),
        ])
    }
}

extension Page {
    /// `{"items": [...], "nextCursor": "…" | null}` with each item rendered by `item`.
    public func json(_ item: (Item) -> JSONValue) -> JSONValue {
        .object(["items": .array(items.map(item)), "nextCursor": nextCursor.map(JSONValue.string) ?? .null])
    }
}
