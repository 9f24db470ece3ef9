import Foundation

/// A session as the collector derived it from the events carrying its `context.sessionId`.
public struct SessionSummary: Sendable, Hashable {
    /// The session id.
    public var sessionId: String
    /// The user id, once any event of the session carried one.
    public var userId: String?
    /// The anonymous id of the session's first event that carried one.
    public var anonymousId: String?
    /// The corrected time of the session's earliest event.
    public var firstTimestamp: Date
    /// The corrected time of the session's latest event.
    public var lastTimestamp: Date
    /// How many events the session has.
    public var eventCount: Int

    /// Creates a summary.
    public init(
        sessionId: String, userId: String?, anonymousId: String?, firstTimestamp: Date, lastTimestamp: Date,
        eventCount: Int
    ) {
        self.sessionId = sessionId
        self.userId = userId
        self.anonymousId = anonymousId
        self.firstTimestamp = firstTimestamp
        self.lastTimestamp = lastTimestamp
        self.eventCount = eventCount
    }
}
