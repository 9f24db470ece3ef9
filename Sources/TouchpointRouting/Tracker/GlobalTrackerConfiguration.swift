import Foundation
import Logging
import TouchpointCore

/// How a ``GlobalTracker`` queues and reports.
public struct GlobalTrackerConfiguration: Sendable {
    /// The most events held for the adapters at once (default 10 000). Before tracking starts
    /// the oldest are dropped beyond it (``RoutingStatistics/droppedBeforeStart``); afterwards
    /// an adapter that falls this far behind loses its oldest ones
    /// (``AdapterStatistics/dropped``), and the others are not affected.
    public var queueCapacity = 10_000
    /// How long an adapter's thread that ran out of work keeps looking for more before it
    /// sleeps (default 2 ms). Events recorded meanwhile cost the recording thread no wake-up,
    /// so a burst pays for one; they reach the adapter up to this much later.
    public var lingerInterval: TimeInterval = 0.002
    /// Where the tracker reports, besides its ``GlobalTracker/log(_:)`` handler.
    public var logger: Logger = .touchpoint("routing")

    public init() {}
}
