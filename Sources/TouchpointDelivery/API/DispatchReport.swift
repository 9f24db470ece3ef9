/// What happened while ``EventDispatcher/dispatch(timeout:failFast:)`` waited.
public struct DispatchReport: Sendable, Hashable {
    /// Events the collector acknowledged meanwhile.
    public var deliveredEvents: Int
    /// Events dropped meanwhile (refused batches, oversized events).
    public var droppedEvents: Int

    /// Creates a report.
    public init(deliveredEvents: Int = 0, droppedEvents: Int = 0) {
        self.deliveredEvents = deliveredEvents
        self.droppedEvents = droppedEvents
    }
}
