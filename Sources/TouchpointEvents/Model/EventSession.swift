import Foundation

/// A session: a run of events by one user (or an anonymous one), stored as `session.json`.
public struct EventSession: Sendable, Hashable, Identifiable {
    /// The session's id; also the name of its folder.
    public let id: UUID
    /// The user the session was started for, or nil when anonymous.
    public let userId: String?
    /// Metadata given when the session started (plan, experiment variant, …).
    public let metadata: [String: EventValue]?
    /// When the session started.
    public let startedAt: Date
    /// When the session ended, or nil while it is open (or if the app was killed).
    public var endedAt: Date?

    public init(
        id: UUID = UUID(), userId: String?, metadata: [String: EventValue]?, startedAt: Date = Date(),
        endedAt: Date? = nil
    ) {
        self.id = id
        self.userId = userId
        self.metadata = metadata
        self.startedAt = startedAt
        self.endedAt = endedAt
    }
}

extension EventSession: Codable {
    enum CodingKeys: String, CodingKey {
        case id, userId, metadata, startedAt, endedAt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        userId = try container.decodeIfPresent(String.self, forKey: .userId)
        metadata = try container.decodeIfPresent([String: EventValue].self, forKey: .metadata)
        startedAt = try Self.decodeDate(container, .startedAt)
        endedAt =
            try container.decodeIfPresent(String.self, forKey: .endedAt) == nil
            ? nil : try Self.decodeDate(container, .endedAt)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encodeIfPresent(userId, forKey: .userId)
        try container.encodeIfPresent(metadata, forKey: .metadata)
        try container.encode(Timestamp.format(startedAt), forKey: .startedAt)
        try container.encodeIfPresent(endedAt.map(Timestamp.format), forKey: .endedAt)
    }

    private static func decodeDate(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> Date {
        let text = try container.decode(String.self, forKey: key)
        guard let date = Timestamp.parse(text) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: "not an ISO-8601 timestamp: \(text)")
        }
        return date
    }
}
