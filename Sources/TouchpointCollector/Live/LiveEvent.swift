import Foundation
import TouchpointCore

/// An event as a live view shows it, the moment the collector stored it.
public struct LiveEvent: Sendable, Hashable {
    /// The source it was stored for.
    public var source: String
    /// The client's `messageId`.
    public var messageId: String
    /// The call type (`track`, `identify`, …).
    public var type: String
    /// The event name, when it has one.
    public var name: String?
    /// The user id, when there was one.
    public var userId: String?
    /// The anonymous id, when there was one.
    public var anonymousId: String?
    /// `context.sessionId`, when there was one.
    public var sessionId: String?
    /// The corrected event time.
    public var timestamp: Date
    /// The event's properties (traits of an identify call).
    public var properties: [String: JSONValue]

    /// Creates a live event.
    public init(
        source: String, messageId: String, type: String, name: String?, userId: String?, anonymousId: String?,
        sessionId: String?, timestamp: Date, properties: [String: JSONValue]
    ) {
        self.source = source
        self.messageId = messageId
        self.type = type
        self.name = name
        self.userId = userId
        self.anonymousId = anonymousId
        self.sessionId = sessionId
        self.timestamp = timestamp
        self.properties = properties
    }

    init(_ message: IngestMessage, source: String) {
        let payload = try? JSONParser.parse(message.payload)
        self.init(
            source: source, messageId: message.messageId, type: message.type.rawValue, name: message.name,
            userId: message.userId, anonymousId: message.anonymousId, sessionId: message.sessionId,
            timestamp: Date(timeIntervalSince1970: Double(message.timestamp) / 1000),
            properties: (payload?["properties"] ?? payload?["traits"])?.objectValue ?? [:])
    }

    /// The event as JSON, in the shape of the query API's events plus `source`.
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "source": .string(source), "messageId": .string(messageId), "type": .string(type),
            "timestamp": .string(Timestamp.format(timestamp)), "properties": .object(properties),
        ]
        if let name { members["event"] = .string(name) }
        if let userId { members["userId"] = .string(userId) }
        if let anonymousId { members["anonymousId"] = .string(anonymousId) }
        if let sessionId { members["sessionId"] = .string(sessionId) }
        return .object(members)
    }
}
