import TouchpointCore

/// What a ``FaultInjectingServer`` did with the requests it received.
public struct FaultStatistics: Sendable, Hashable {
    /// Requests received.
    public var received = 0
    /// Requests passed to the upstream (or the standalone handler), including those whose
    /// response was then cut short.
    public var forwarded = 0
    /// Forwarded requests for which the upstream gave no response (answered `502`).
    public var upstreamFailures = 0
    /// Injected faults by kind.
    public var injected: [FaultPlan.Fault: Int] = [:]

    /// Creates empty statistics.
    public init() {}

    /// All injected faults.
    public var totalInjected: Int { injected.values.reduce(0, +) }

    /// Injected faults that match `predicate`, e.g. `count { if case .status(429, _) = $0 { true } else { false } }`.
    public func count(where predicate: (FaultPlan.Fault) -> Bool) -> Int {
        injected.filter { predicate($0.key) }.values.reduce(0, +)
    }
}
