/// One accepted message of a Segment-style request, checked and ready to store.
///
/// The collector keeps the message as received (``payload``) and lifts out the fields it indexes
/// and queries on. ``timestamp`` is the corrected time (see ``TimestampCorrection``);
/// ``originalTimestamp`` is the text the client sent.
public struct IngestMessage: Sendable, Hashable {
    /// The client's `messageId`: with the source, what deduplication keys on. A message sent
    /// without one gets a generated id (``isMessageIdGenerated``).
    public var messageId: String
    /// Whether the client sent no `messageId` and the collector generated ``messageId``: such a
    /// message cannot be deduplicated (a retry of it is stored again).
    public var isMessageIdGenerated: Bool
    /// The call: `track`, `identify`, `page`, `screen`, `group` or `alias`.
    public var type: MessageType
    /// The event name (`event` of a track call, `name` of a page or screen call).
    public var name: String?
    /// The user id, when the client sent one.
    public var userId: String?
    /// The anonymous id, when the client sent one.
    public var anonymousId: String?
    /// `context.sessionId`, when the client sent one.
    public var sessionId: String?
    /// The corrected event time, in milliseconds since 1970.
    public var timestamp: Int64
    /// The `timestamp` text as sent (or `originalTimestamp` when the message has no `timestamp`),
    /// when there was one.
    public var originalTimestamp: String?
    /// When the client sent the request (`sentAt`), in milliseconds since 1970.
    public var sentAt: Int64?
    /// When the collector received the request, in milliseconds since 1970.
    public var receivedAt: Int64
    /// The message as received, compact JSON (without any `writeKey` member).
    public var payload: String
    /// The keys the collector's definitions count (``PropertyKeyReader/definedKeys(of:)``): the
    /// top-level keys of `properties` for a named `track`, `page` or `screen` call, of `traits`
    /// for an `identify` call, with their JSON types. Nil when not read yet: the storage then
    /// reads them from ``payload``.
    public var propertyKeys: [PropertyKey]?

    /// Creates a message.
    public init(
        messageId: String, type: MessageType, name: String?, userId: String?, anonymousId: String?,
        sessionId: String?, timestamp: Int64, originalTimestamp: String?, sentAt: Int64?, receivedAt: Int64,
        payload: String, isMessageIdGenerated: Bool = false, propertyKeys: [PropertyKey]? = nil
    ) {
        self.messageId = messageId
        self.isMessageIdGenerated = isMessageIdGenerated
        self.type = type
        self.name = name
        self.userId = userId
        self.anonymousId = anonymousId
        self.sessionId = sessionId
        self.timestamp = timestamp
        self.originalTimestamp = originalTimestamp
        self.sentAt = sentAt
        self.receivedAt = receivedAt
        self.payload = payload
        self.propertyKeys = propertyKeys
    }
}
