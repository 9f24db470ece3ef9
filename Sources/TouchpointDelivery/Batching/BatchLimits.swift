/// How big one request to the collector may be: Segment's limits by default, lower when asked.
///
/// A batch holds at most ``maximumEvents`` messages and at most ``maximumBytes`` bytes of JSON
/// body (before compression), envelope included; a single message larger than
/// ``maximumEventBytes`` is never sent (it is dropped and logged). Limits above Segment's are
/// lowered to them.
public struct BatchLimits: Sendable, Hashable {
    /// Segment's limit on messages per batch.
    public static let segmentMaximumEvents = 2_500
    /// Segment's limit on one request's body, "500 KB", read as 500,000 bytes (not 512,000):
    /// the lower reading, so no server that takes either refuses a full batch.
    public static let segmentMaximumBytes = 500_000
    /// Segment's limit on one message: 32 KB.
    public static let segmentMaximumEventBytes = 32 * 1024

    /// The most messages in one request.
    public var maximumEvents: Int
    /// The most bytes of one request's JSON body, before compression.
    public var maximumBytes: Int
    /// The most bytes of one message; larger messages are dropped and logged, never sent.
    public var maximumEventBytes: Int

    /// Creates limits, clamped to Segment's: at least one event, and a body that can hold the
    /// largest message allowed.
    /// - Parameters:
    ///   - maximumEvents: messages per request (2,500 by default).
    ///   - maximumBytes: bytes per request body (500,000 by default).
    ///   - maximumEventBytes: bytes per message (32 KB by default).
    public init(
        maximumEvents: Int = segmentMaximumEvents,
        maximumBytes: Int = segmentMaximumBytes,
        maximumEventBytes: Int = segmentMaximumEventBytes
    ) {
        self.maximumEvents = min(max(1, maximumEvents), Self.segmentMaximumEvents)
        self.maximumEventBytes = min(max(256, maximumEventBytes), Self.segmentMaximumEventBytes)
        self.maximumBytes = min(
            max(self.maximumEventBytes + BatchEnvelope.overhead, maximumBytes), Self.segmentMaximumBytes)
    }

    /// Segment's limits.
    public static let segment = BatchLimits()
}
