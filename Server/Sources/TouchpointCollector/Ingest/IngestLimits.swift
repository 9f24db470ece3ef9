/// How much one request and one event may carry (Segment's limits by default).
public struct IngestLimits: Sendable, Hashable {
    /// The most bytes one request body may have, before and after gzip (default 500 KB).
    public var maximumRequestBytes: Int
    /// The most bytes one event may have (default 32 KB); a larger event is rejected, the rest kept.
    public var maximumEventBytes: Int
    /// The most events one batch may carry (default 2,500).
    public var maximumBatchEvents: Int

    /// Creates limits.
    public init(
        maximumRequestBytes: Int = 500 * 1024, maximumEventBytes: Int = 32 * 1024, maximumBatchEvents: Int = 2500
    ) {
        self.maximumRequestBytes = maximumRequestBytes
        self.maximumEventBytes = maximumEventBytes
        self.maximumBatchEvents = maximumBatchEvents
    }

    /// Segment's limits: 500 KB per request, 32 KB per event, 2,500 events per batch.
    public static let segment = IngestLimits()
}
