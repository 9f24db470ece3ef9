/// Whether the device can reach the network, as a ``ReachabilityMonitor`` reports it.
public enum ReachabilityStatus: Sendable, Hashable {
    /// A network path is available: pending events are sent, and a backoff after network
    /// failures is cut short.
    case online
    /// No network path: uploads pause (nothing is attempted, nothing is counted as a failure).
    case offline
}
