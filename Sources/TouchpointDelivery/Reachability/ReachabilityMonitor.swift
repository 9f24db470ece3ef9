/// A source of connectivity changes for the dispatcher.
///
/// On Apple platforms ``NWPathReachabilityMonitor`` reports the system's network path. Elsewhere
/// there is no such signal and delivery is failure-driven: a request that cannot connect backs
/// off and is retried when the backoff allows. Hosts that learn about connectivity their own way
/// can drive a ``ManualReachabilityMonitor``.
public protocol ReachabilityMonitor: Sendable {
    /// Starts calling `handler` with the current status and every change, until the returned
    /// observation is released.
    func observe(_ handler: @escaping @Sendable (ReachabilityStatus) -> Void) -> ReachabilityObservation
}

/// Keeps a reachability observation alive; releasing it stops the calls.
public final class ReachabilityObservation: Sendable {
    private let stop: @Sendable () -> Void

    /// Creates an observation that calls `stop` when released.
    public init(stop: @escaping @Sendable () -> Void) { self.stop = stop }

    deinit { stop() }
}
