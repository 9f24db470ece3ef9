/// Counters of what a dispatcher did since it was created.
public struct DeliveryStatistics: Sendable, Hashable {
    /// Events the collector acknowledged.
    public var deliveredEvents = 0
    /// Events given up on: batches refused with a 4xx, a single event answered 413, events over
    /// the size limit. Each is logged with its message id.
    public var droppedEvents = 0
    /// Events the collector acknowledged but listed as rejected in its answer (logged).
    public var rejectedEvents = 0
    /// Requests sent, retries included.
    public var requests = 0
    /// Requests that failed and will be retried (error status, timeout, no connection).
    public var failedRequests = 0

    /// Creates zeroed counters.
    public init() {}
}
