import Foundation
import TouchpointCore

/// An event as the collector stored it.
public struct StoredEvent: Sendable, Hashable {
    /// Arrival order: a session's events are listed by it; other lists break ties on ``timestamp`` with it.
    public var sequence: Int64
    /// The client's `messageId`.
    public var messageId: String
    /// The call type (`track`, `identify`, …).
    public var type: String
    /// The event name (`event` of a track call, `name` of a page or screen call).
    public var name: String?
    /// The user id, when there was one.
    public var userId: String?
    /// The anonymous id, when there was one.
    public var anonymousId: String?
    /// `context.sessionId`, when there was one.
    public var sessionId: String?
    /// The corrected event time.
    public var timestamp: Date
    /// The `timestamp` text as the client sent it.
    public var originalTimestamp: String?
    /// When the client sent the request, by its own clock.
    public var sentAt: Date?
    /// When the collector received the request.
    public var receivedAt: Date
    /// The message as the client sent it.
    public var message: JSONValue

    /// Creates a stored event.
    public init(
        sequence: Int64, messageId: String, type: String, name: String?, userId: String?, anonymousId: String?,
        sessionId: String?, timestamp: Date, originalTimestamp: String?, sentAt: Date?, receivedAt: Date,
        message: JSONValue
    ) {
        self.sequence = sequence
        self.messageId = messageId
        self.type = type
        self.name = name
        self.userId = userId
        self.anonymousId = anonymousId
        self.sessionId = sessionId
        self.timestamp = timestamp
        self.originalTimestamp = originalTimestamp
        self.sentAt = sentAt
        self.receivedAt = receivedAt
        self.message = message
    }

    /// The event's properties (the traits of an identify call); empty when it had none.
    public var properties: [String: JSONValue] {
        (message["properties"] ?? message["traits"])?.objectValue ?? [:]
    }

    /// The event's `context`; empty when it had none.
    public var context: [String: JSONValue] { message["context"]?.objectValue ?? [:] }
}
