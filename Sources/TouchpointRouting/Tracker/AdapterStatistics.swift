/// Counters of what one adapter received.
public struct AdapterStatistics: Sendable, Hashable {
    /// The adapter's ``AnalyticsAdapter/name``.
    public let name: String
    /// Calls to `track(event:)` and `track(property:)` made (failed ones included).
    public var delivered = 0
    /// Events and properties its rules kept from it.
    public var skippedByRule = 0
    /// Calls that threw.
    public var failed = 0
    /// Events it lost: it was more than the queue's capacity behind, or its `configure()` threw.
    public var dropped = 0
    /// Events recorded that it has not finished with yet.
    public var pending = 0
    /// Whether `configure()` returned.
    public var isConfigured = false
    /// Whether `configure()` threw (the adapter then receives nothing).
    public var configurationFailed = false

    public init(name: String) { self.name = name }
}
