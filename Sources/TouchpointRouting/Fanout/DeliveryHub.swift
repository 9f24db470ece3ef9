import Foundation
import TouchpointCore

/// The routing queue: the recorder's callback appends, each adapter's thread takes batches, and
/// callers wait for delivery.
///
/// Two locks keep the recording thread from waiting on the adapters' threads. It appends to a
/// small inbox under a lock of its own, which the lanes hold only to swap the inbox out; the
/// lanes move the inbox into the ``FanoutQueue`` and take their batches under `condition`. The
/// recording thread takes `condition` only to wake sleeping lanes, or to move a full inbox
/// itself (every ``spillThreshold`` events while no lane does it).
final class DeliveryHub: @unchecked Sendable {
    // Safe: every `var` below is read and written only while `condition` is locked.
    private let condition = NSCondition()
    private var queue: FanoutQueue<DeliveryItem>
    private var lanes: [LaneCounters] = []
    private var untrackableValues = 0
    private var waiters: [Int: Waiter] = [:]
    private var cancelledWaiters: Set<Int> = []
    private var nextWaiterID = 0

    /// The inbox's previous buffer, kept empty with its capacity so that swapping allocates
    /// nothing in the steady state.
    private var spareInbox: [DeliveryItem] = []
    private let inbox = Locked(Inbox())

    private struct Inbox {
        var items: [DeliveryItem] = []
        /// Items ever appended; the sequence number the next one gets in the queue.
        var appended = 0
        /// Of those, the events and properties (not resets).
        var recorded = 0
        /// Lanes about to sleep until woken (registered under `condition`).
        var sleepers = 0
    }

    /// How long a lane that ran out of work keeps looking before it sleeps; items appended
    /// meanwhile cost the recorder's thread no wake-up.
    let lingerInterval: TimeInterval
    /// The most items a lane takes at once.
    let batchLimit = 64
    /// Inbox size at which the recording thread moves it into the queue itself.
    let spillThreshold: Int

    struct LaneCounters {
        let name: String
        var delivered = 0
        var skippedByRule = 0
        var failed = 0
    }

    /// Counts a lane reports after a batch.
    struct BatchCounts {
        var delivered = 0
        var skippedByRule = 0
        var failed = 0
    }

    private struct Waiter {
        let target: Int
        let lanes: Set<Int>?
        let continuation: CheckedContinuation<Bool, Never>
    }

    init(capacity: Int, lingerInterval: TimeInterval) {
        // A reset is never lost to a full queue: an adapter that fell behind still forgets the user.
        queue = FanoutQueue(capacity: capacity, isOwed: { !$0.isRecorded })
        self.lingerInterval = lingerInterval
        spillThreshold = min(64, capacity)
        spareInbox.reserveCapacity(spillThreshold)
    }

    private func locked<Result>(_ body: () -> Result) -> Result {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    /// Moves the inbox into the queue. Call with `condition` locked.
    /// - Returns: whether a lane sleeps and must be woken.
    private func moveInboxLocked() -> Bool {
        inbox.withLock { inbox in
            if !inbox.items.isEmpty { swap(&inbox.items, &spareInbox) }
        }
        var mustWake = false
        for item in spareInbox where queue.append(item) { mustWake = true }
        spareInbox.removeAll(keepingCapacity: true)
        return mustWake
    }

    // MARK: The recorder's side

    /// Appends an item. Costs the recording thread one short lock, plus a wake-up (one system
    /// call whatever the number of lanes) when lanes sleep.
    func enqueue(_ item: DeliveryItem) {
        let (wake, spill) = inbox.withLock { inbox in
            inbox.items.append(item)
            inbox.appended += 1
            if item.isRecorded { inbox.recorded += 1 }
            let wake = inbox.sleepers > 0
            inbox.sleepers = 0
            return (wake, inbox.items.count >= spillThreshold)
        }
        guard wake || spill else { return }
        // Taking `condition` orders the wake-up after any lane's registration as a sleeper.
        condition.lock()
        let mustWake = (spill && moveInboxLocked()) || wake
        condition.unlock()
        if mustWake { condition.broadcast() }
    }

    /// Appends items taken from another hub, in order.
    func enqueue(contentsOf items: [DeliveryItem]) {
        for item in items { enqueue(item) }
    }

    /// Removes every held item (tracking must not have started).
    func removeAll() -> [DeliveryItem] {
        locked {
            _ = moveInboxLocked()
            return queue.removeAll()
        }
    }

    func noteUntrackableValues(_ count: Int) {
        locked { untrackableValues += count }
    }

    /// Whether lanes have been added.
    var isStarted: Bool { locked { queue.isStarted } }

    /// Adds a lane per name; they read from the oldest held item.
    func addLanes(named names: [String]) -> Range<Int> {
        let (range, ready) = locked {
            if moveInboxLocked() { condition.broadcast() }
            lanes.append(contentsOf: names.map { LaneCounters(name: $0) })
            return (queue.addLanes(names.count), satisfiedWaiters())
        }
        for waiter in ready { waiter.resume(returning: true) }
        return range
    }

    /// Takes no more items; lanes deliver what is held, then their threads end.
    func close() {
        locked {
            _ = moveInboxLocked()
            _ = queue.close()
        }
        condition.broadcast()
    }

    // MARK: The lanes' side

    /// Records that a lane's adapter is configured (or failed to be).
    func configured(lane: Int, succeeded: Bool) {
        let ready = locked {
            queue.configured(lane: lane, succeeded: succeeded)
            return satisfiedWaiters()
        }
        for waiter in ready { waiter.resume(returning: true) }
    }

    /// Records that a lane delivered its previous batch (if any), then returns its next one,
    /// waiting for it; nil when the hub is closed and the lane has delivered everything.
    ///
    /// One lock per batch: the lane finishes and takes in the same critical section.
    func nextBatch(lane: Int, finishing counts: BatchCounts?) -> [DeliveryItem]? {
        condition.lock()
        // Waiters this batch satisfied; whoever removes a waiter resumes it, outside the lock.
        var ready: [CheckedContinuation<Bool, Never>] = []
        if let counts {
            queue.finish(lane: lane)
            lanes[lane].delivered += counts.delivered
            lanes[lane].skippedByRule += counts.skippedByRule
            lanes[lane].failed += counts.failed
            if !waiters.isEmpty { ready = satisfiedWaiters() }
        }
        var lingered = false
        while true {
            if moveInboxLocked() { condition.broadcast() }
            let items = queue.take(lane: lane, limit: batchLimit)
            if !items.isEmpty || queue.isFinished(lane: lane) {
                condition.unlock()
                for waiter in ready { waiter.resume(returning: true) }
                return items.isEmpty ? nil : items
            }
            if !ready.isEmpty {
                condition.unlock()
                for waiter in ready { waiter.resume(returning: true) }
                ready = []
                condition.lock()
                continue
            }
            if !lingered {
                lingered = true
                queue.setWait(lane: lane, .lingering)
                _ = condition.wait(until: Date(timeIntervalSinceNow: lingerInterval))
            } else {
                let empty = inbox.withLock { inbox in
                    guard inbox.items.isEmpty else { return false }
                    inbox.sleepers += 1
                    return true
                }
                guard empty else { continue }
                queue.setWait(lane: lane, .sleeping)
                condition.wait()
            }
        }
    }

    // MARK: Observing

    func statistics() -> RoutingStatistics {
        locked {
            if moveInboxLocked() { condition.broadcast() }
            var statistics = RoutingStatistics()
            statistics.received = inbox.withLock { $0.recorded }
            statistics.droppedBeforeStart = queue.droppedBeforeStart
            statistics.untrackableValues = untrackableValues
            statistics.waiting = queue.count
            statistics.adapters = lanes.indices.map { index in
                let lane = queue.lanes[index]
                var adapter = AdapterStatistics(name: lanes[index].name)
                adapter.delivered = lanes[index].delivered
                adapter.skippedByRule = lanes[index].skippedByRule
                adapter.failed = lanes[index].failed
                adapter.dropped = lane.dropped
                adapter.isConfigured = lane.isConfigured && lane.isEnabled
                adapter.configurationFailed = !lane.isEnabled
                adapter.pending = queue.end - lane.done
                return adapter
            }
            return statistics
        }
    }

    /// Waits until every item appended before the call is done with by the chosen lanes (all
    /// when nil) — delivered, skipped by a rule, or dropped — or until `timeout`.
    /// - Returns: false when the time ran out (or the task was cancelled) first.
    func waitUntilDone(lanes chosen: Set<Int>?, timeout: Duration) async -> Bool {
        let id = locked {
            nextWaiterID += 1
            return nextWaiterID
        }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.waitUntilDone(id: id, lanes: chosen) }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    private func waitUntilDone(id: Int, lanes chosen: Set<Int>?) async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let outcome: Bool? = locked {
                    if cancelledWaiters.remove(id) != nil { return false }
                    if moveInboxLocked() { condition.broadcast() }
                    let waiter = Waiter(target: queue.end, lanes: chosen, continuation: continuation)
                    if isSatisfied(waiter) { return true }
                    waiters[id] = waiter
                    return nil
                }
                if let outcome { continuation.resume(returning: outcome) }
            }
        } onCancel: {
            let waiter: Waiter? = locked {
                guard let waiter = waiters.removeValue(forKey: id) else {
                    cancelledWaiters.insert(id)
                    return nil
                }
                return waiter
            }
            waiter?.continuation.resume(returning: false)
        }
    }

    /// Removes and returns the waiters whose items are all done with. Call with the lock held.
    private func satisfiedWaiters() -> [CheckedContinuation<Bool, Never>] {
        var ready: [CheckedContinuation<Bool, Never>] = []
        for (id, waiter) in waiters where isSatisfied(waiter) {
            waiters.removeValue(forKey: id)
            ready.append(waiter.continuation)
        }
        return ready
    }

    private func isSatisfied(_ waiter: Waiter) -> Bool {
        guard queue.isStarted else { return false }
        for index in queue.lanes.indices where waiter.lanes?.contains(index) ?? true {
            let lane = queue.lanes[index]
            if lane.isEnabled && lane.done < waiter.target { return false }
        }
        return true
    }
}
