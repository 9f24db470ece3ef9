import Foundation

/// A dispatcher's state at one moment: for progress displays and diagnostics.
public struct DeliveryStatus: Sendable, Hashable {
    /// Whether delivery is enabled.
    public var isEnabled: Bool
    /// Whether the reachability monitor (if any) says the device is online.
    public var isOnline: Bool
    /// The dispatch interval in effect.
    public var dispatchInterval: TimeInterval
    /// What the collector has acknowledged.
    public var cursor: DeliveryCursor
    /// Counters since the dispatcher was created.
    public var statistics: DeliveryStatistics
    /// Consecutive failed attempts (persisted across launches).
    public var consecutiveFailures: Int
    /// When the next attempt may start after failures; nil when not backing off.
    public var nextAttempt: Date?
    /// Whether a batch is read and waiting for the collector's acknowledgement.
    public var hasBatchInFlight: Bool
    /// How many ``EventDispatcher/dispatch(timeout:failFast:)`` calls are waiting.
    public var waitingDispatches: Int
}
