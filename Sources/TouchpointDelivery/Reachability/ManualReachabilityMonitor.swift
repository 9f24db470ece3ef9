import TouchpointCore

/// A ``ReachabilityMonitor`` driven by calling ``send(_:)``: for hosts with their own view of
/// connectivity (a server, a VPN-aware app), and for tests.
public final class ManualReachabilityMonitor: ReachabilityMonitor {
    private struct Observers {
        var status: ReachabilityStatus
        var handlers: [Int: @Sendable (ReachabilityStatus) -> Void] = [:]
        var lastID = 0
    }

    private let observers: Locked<Observers>

    /// Creates a monitor reporting `status` until told otherwise.
    public init(status: ReachabilityStatus = .online) { observers = Locked(Observers(status: status)) }

    /// The status last sent.
    public var status: ReachabilityStatus { observers.withLock { $0.status } }

    public func observe(_ handler: @escaping @Sendable (ReachabilityStatus) -> Void) -> ReachabilityObservation {
        let (id, current) = observers.withLock { state in
            state.lastID += 1
            state.handlers[state.lastID] = handler
            return (state.lastID, state.status)
        }
        handler(current)
        return ReachabilityObservation { [observers] in _ = observers.withLock { $0.handlers.removeValue(forKey: id) } }
    }

    /// Reports `status` to every observer, on the calling thread.
    public func send(_ status: ReachabilityStatus) {
        let handlers = observers.withLock { state in
            state.status = status
            return Array(state.handlers.values)
        }
        for handler in handlers { handler(status) }
    }
}
