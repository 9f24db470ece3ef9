#if canImport(Network)
import Dispatch
import Network

/// The system's network path as a ``ReachabilityMonitor`` (Apple platforms): `satisfied` is
/// online, anything else offline. It only forwards what `NWPathMonitor` says; the dispatcher
/// decides what to do with it.
public final class NWPathReachabilityMonitor: ReachabilityMonitor {
    private let queue = DispatchQueue(label: "touchpoint.delivery.reachability")

    /// Creates a monitor; nothing is observed until ``observe(_:)``.
    public init() {}

    public func observe(_ handler: @escaping @Sendable (ReachabilityStatus) -> Void) -> ReachabilityObservation {
        let monitor = NWPathMonitor()
        monitor.pathUpdateHandler = { path in
            handler(path.status == .satisfied ? .online : .offline)
        }
        monitor.start(queue: queue)
        return ReachabilityObservation { monitor.cancel() }
    }
}
#endif
