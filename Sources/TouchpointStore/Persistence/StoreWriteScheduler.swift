import Foundation

/// Runs a persistent scope's coalesced write later. The store asks for at most one pending
/// write at a time, so a storm of changes costs one write per delay.
public protocol StoreWriteScheduler: Sendable {
    /// Runs `work` once, after about `delay` seconds, on any thread.
    func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () -> Void)
}

/// Schedules writes on a background dispatch queue.
public struct DispatchWriteScheduler: StoreWriteScheduler {
    private let queue: DispatchQueue

    /// Creates a scheduler.
    /// - Parameter queue: where writes run (default: a global utility queue).
    public init(queue: DispatchQueue = .global(qos: .utility)) { self.queue = queue }

    /// Runs `work` on the queue after `delay` seconds.
    public func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () -> Void) {
        queue.asyncAfter(deadline: .now() + delay, execute: work)
    }
}
