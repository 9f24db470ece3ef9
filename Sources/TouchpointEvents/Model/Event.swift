import Foundation

/// One recorded event, as it is stored in `events.jsonl` and handed to consumers.
///
/// Every field is fixed when the event is recorded: the `messageId` (``id``) is what lets a
/// collector drop a retried delivery, and the timestamp is kept to the millisecond.
public struct Event: Sendable, Hashable, Identifiable {
    /// The message id, a time-ordered UUID fixed at record time.
    public let id: UUID
    /// The kind of call: ``EventType/track`` unless recorded otherwise.
    public let type: EventType
    /// The event's name, e.g. `checkout_success`.
    public let name: String
    /// When the event was recorded, to the millisecond.
    public let timestamp: Date
    /// The session the event belongs to.
    public let sessionId: UUID
    /// The user id of the session, or nil for an anonymous session.
    public let userId: String?
    /// The stable id of this installation, present on every event.
    public let anonymousId: String
    /// The event's properties (for an `identify` event, the traits).
    public let properties: [String: EventValue]

    /// The message id as text, as it appears on the wire and on disk.
    public var messageId: String { id.uuidString }

    public init(
        id: UUID = UUID(),
        type: EventType = .track,
        name: String,
        timestamp: Date = Date(),
        sessionId: UUID,
        userId: String?,
        anonymousId: String,
        properties: [String: EventValue] = [:]
    ) {
        self.id = id
        self.type = type
        self.name = name
        self.timestamp = timestamp
        self.sessionId = sessionId
        self.userId = userId
        self.anonymousId = anonymousId
        self.properties = properties
    }
}

extension Event: Codable {
    enum CodingKeys: String, CodingKey {
        case id = "messageId"
        case type, name, timestamp, sessionId, userId, anonymousId, properties
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        type = try container.decodeIfPresent(EventType.self, forKey: .type) ?? .track
        name = try container.decode(String.self, forKey: .name)
        let text = try container.decode(String.self, forKey: .timestamp)
        guard let date = Timestamp.parse(text) else {
            throw DecodingError.dataCorruptedError(
                forKey: .timestamp, in: container, debugDescription: "not an ISO-8601 timestamp: \(text)")
        }
        timestamp = date
        sessionId = try container.decode(UUID.self, forKey: .sessionId)
        userId = try container.decodeIfPresent(String.self, forKey: .userId)
        anonymousId = try container.decodeIfPresent(String.self, forKey: .anonymousId) ?? ""
        properties = try container.decodeIfPresent([String: EventValue].self, forKey: .properties) ?? [:]
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(type, forKey: .type)
        try container.encode(name, forKey: .name)
        try container.encode(Timestamp.format(timestamp), forKey: .timestamp)
        try container.encode(sessionId, forKey: .sessionId)
        try container.encodeIfPresent(userId, forKey: .userId)
        try container.encode(anonymousId, forKey: .anonymousId)
        try container.encode(properties, forKey: .properties)
    }
}
