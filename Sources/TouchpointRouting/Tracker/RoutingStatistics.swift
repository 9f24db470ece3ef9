/// Counters of what a ``GlobalTracker`` routed, for health checks and tests.
public struct RoutingStatistics: Sendable, Hashable {
    /// Events the recorder handed to the tracker (both doors, properties included).
    public var received = 0
    /// Events dropped because the queue was full before tracking started.
    public var droppedBeforeStart = 0
    /// Metadata values that could not be recorded (reported, and left out of the log entry).
    public var untrackableValues = 0
    /// Events held in the queue now, waiting for at least one adapter.
    public var waiting = 0
    /// Per adapter, in the order they were started.
    public var adapters: [AdapterStatistics] = []

    public init() {}

    /// The counters of the adapter named `name`.
    public subscript(adapter name: String) -> AdapterStatistics? {
        adapters.first { $0.name == name }
    }
}
