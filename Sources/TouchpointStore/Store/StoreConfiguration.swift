import Foundation

/// How a ``DefaultStore`` runs: its backend, how persistent scopes write, and where problems go.
public struct StoreConfiguration: Sendable {
    /// The adapter behind `backend(namespace:scenarioID:)` scopes; nil keeps them local.
    public var backend: (any StoreBackendAdapter)?
    /// How long a persistent scope waits after a change before writing, gathering the changes
    /// made meanwhile into the same write (default 0.25 s). At most one write is pending at a time.
    public var writeDelay: TimeInterval
    /// Runs the coalesced writes (default: a background dispatch queue).
    public var writeScheduler: any StoreWriteScheduler
    /// How many recent changes each store keeps for the inspector (debug builds only).
    public var recentChangeLimit: Int
    /// How deep subscribers may chain writes (a subscriber writing, whose write notifies a
    /// subscriber that writes, …) before the store refuses the next write as a feedback loop.
    public var maximumCascadeDepth: Int
    /// Called with each problem the store reports: corrupt or unreadable persisted data, failed
    /// writes, dropped data after a major version bump. Problems are also logged.
    public var onProblem: (@Sendable (StoreError) -> Void)?

    /// Creates a configuration.
    public init(
        backend: (any StoreBackendAdapter)? = nil, writeDelay: TimeInterval = 0.25,
        writeScheduler: any StoreWriteScheduler = DispatchWriteScheduler(), recentChangeLimit: Int = 100,
        maximumCascadeDepth: Int = 32, onProblem: (@Sendable (StoreError) -> Void)? = nil
    ) {
        self.backend = backend
        self.writeDelay = writeDelay
        self.writeScheduler = writeScheduler
        self.recentChangeLimit = recentChangeLimit
        self.maximumCascadeDepth = maximumCascadeDepth
        self.onProblem = onProblem
    }
}
