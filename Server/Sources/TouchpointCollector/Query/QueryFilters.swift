import Foundation
import TouchpointCore

/// A user, by the id the client sent: a `userId` or an `anonymousId`.
public enum UserReference: Sendable, Hashable {
    /// A signed-in user's id.
    case userId(String)
    /// An installation's anonymous id.
    case anonymousId(String)
    /// Either: a user id or an anonymous id equal to this text (what a search box means).
    case any(String)
}

/// A half-open time range `from ..< to`; either end may be open.
public struct TimeRange: Sendable, Hashable {
    /// The earliest time included, or nil for no lower bound.
    public var from: Date?
    /// The first time excluded, or nil for no upper bound.
    public var to: Date?

    /// Creates a range.
    public init(from: Date? = nil, to: Date? = nil) {
        self.from = from
        self.to = to
    }

    /// All of time.
    public static let all = TimeRange()

    var fromMilliseconds: Int64? { from.map { Timestamp.milliseconds($0) } }
    var toMilliseconds: Int64? { to.map { Timestamp.milliseconds($0) } }
}

/// Which events to list.
public struct EventFilter: Sendable, Hashable {
    /// Only events with this name, when set.
    public var name: String?
    /// Only events in this time range (corrected timestamps).
    public var range: TimeRange

    /// Creates a filter.
    public init(name: String? = nil, range: TimeRange = .all) {
        self.name = name
        self.range = range
    }
}

/// One free-text survey answer.
public struct SurveyTextAnswer: Sendable, Hashable {
    /// The answer's text.
    public var text: String
    /// When it was given (corrected).
    public var timestamp: Date
    /// Who gave it, when known.
    public var userId: String?
    /// The installation that gave it, when known.
    public var anonymousId: String?
    /// The session it was given in, when known.
    public var sessionId: String?
    /// The `messageId` of the `survey_response` event.
    public var messageId: String

    /// Creates an answer.
    public init(
        text: String, timestamp: Date, userId: String?, anonymousId: String?, sessionId: String?, messageId: String
    ) {
        self.text = text
        self.timestamp = timestamp
        self.userId = userId
        self.anonymousId = anonymousId
        self.sessionId = sessionId
        self.messageId = messageId
    }
}
