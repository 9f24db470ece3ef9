/// The routing queue as a plain state machine: one bounded list of items in log order, read by
/// several lanes (one per adapter), each at its own position.
///
/// An item is stored once however many lanes read it, so appending costs the same for one
/// adapter as for ten. A lane that falls behind by ``capacity`` items loses the oldest ones
/// (counted in ``Lane/dropped``); the other lanes are not affected. Before ``addLanes(_:)`` is
/// first called (tracking not started) items wait, and the oldest are dropped beyond capacity
/// (counted in ``droppedBeforeStart``). An item the queue must not lose (a reset: ``isOwed``)
/// is not dropped with them: it is owed to each lane that lost it, which takes it first.
///
/// Not thread-safe: ``DeliveryHub`` guards it with a lock.
struct FanoutQueue<Item> {
    /// How a lane's thread waits when it has nothing to do.
    enum Wait: Equatable {
        /// Delivering, configuring, or about to look at the queue.
        case busy
        /// Waiting for a short while; new items need no wake-up, it will look again.
        case lingering
        /// Waiting until woken; an append must wake it.
        case sleeping
    }

    /// One reader.
    struct Lane {
        /// The sequence number of the next item this lane takes.
        var cursor: Int
        /// The first sequence number of the batch being delivered, if one is.
        var inFlightFrom: Int?
        var wait = Wait.busy
        /// Whether the adapter finished configuring; items wait until it has.
        var isConfigured = false
        /// False after configuring failed: the lane takes nothing, and everything is dropped.
        var isEnabled = true
        /// Items this lane lost: evicted before it took them, or dropped while disabled.
        var dropped = 0
        /// An evicted item the lane must still get (``FanoutQueue/isOwed``) and its sequence
        /// number; it comes first.
        var owed: (item: Item, sequence: Int)?

        /// Every item below this sequence number is done with (delivered, skipped or dropped).
        var done: Int { inFlightFrom ?? min(cursor, owed?.sequence ?? cursor) }
    }

    /// The most items held at once.
    let capacity: Int
    /// Whether an item must reach every lane even when evicted (the latest such item is kept).
    let isOwed: (Item) -> Bool
    /// An owed item evicted before tracking started, for the first lanes.
    private var owedBeforeStart: (item: Item, sequence: Int)?
    private var ring: [Item?]
    /// Ring index of the item with sequence number `base`.
    private var head = 0
    /// The sequence number of the oldest item held.
    private(set) var base = 0
    /// The sequence number the next item gets.
    private(set) var end = 0
    private(set) var lanes: [Lane] = []
    /// Whether lanes have been added (tracking started).
    private(set) var isStarted = false
    /// Whether the queue takes no more items; lanes finish what is held, then stop.
    private(set) var isClosed = false
    /// Items dropped from the full queue before tracking started.
    private(set) var droppedBeforeStart = 0

    init(capacity: Int, isOwed: @escaping (Item) -> Bool = { _ in false }) {
        precondition(capacity > 0, "a routing queue needs room for at least one item")
        self.capacity = capacity
        self.isOwed = isOwed
        ring = Array(repeating: nil, count: capacity)
    }

    /// How many items are held.
    var count: Int { end - base }

    /// Adds an item at the end.
    /// - Returns: whether a lane is asleep and must be woken to see it.
    mutating func append(_ item: Item) -> Bool {
        guard !isClosed else { return false }
        if count == capacity { evictOldest() }
        ring[(head + count) % capacity] = item
        end += 1
        var mustWake = false
        for index in lanes.indices {
            if !lanes[index].isEnabled {
                lanes[index].cursor = end
                lanes[index].dropped += 1
            } else if lanes[index].wait == .sleeping {
                lanes[index].wait = .busy
                mustWake = true
            }
        }
        if isStarted { trim() }
        return mustWake
    }

    /// Adds `count` lanes reading from the oldest item held (or, when tracking had already
    /// started, from the next item appended).
    /// - Returns: the new lanes' indices.
    mutating func addLanes(_ count: Int) -> Range<Int> {
        let first = lanes.count
        let start = isStarted ? end : base
        var lane = Lane(cursor: start)
        if !isStarted { lane.owed = owedBeforeStart }
        owedBeforeStart = nil
        lanes.append(contentsOf: repeatElement(lane, count: count))
        isStarted = true
        trim()
        return first..<lanes.count
    }

    /// Marks a lane's adapter as configured (it may now take items) or as failed (it never will;
    /// what it had not taken counts as dropped).
    mutating func configured(lane index: Int, succeeded: Bool) {
        lanes[index].isConfigured = true
        guard !succeeded else { return }
        lanes[index].isEnabled = false
        lanes[index].dropped += end - lanes[index].cursor
        lanes[index].cursor = end
        lanes[index].owed = nil
        trim()
    }

    /// Takes up to `limit` items for a lane, in order, and marks them in flight.
    /// - Returns: the items; empty when the lane has nothing to take (or is not configured).
    mutating func take(lane index: Int, limit: Int) -> [Item] {
        let lane = lanes[index]
        guard lane.isEnabled, lane.isConfigured, lane.inFlightFrom == nil, lane.cursor < end || lane.owed != nil
        else { return [] }
        let stop = min(end, lane.cursor + limit)
        var items: [Item] = []
        items.reserveCapacity(stop - lane.cursor + 1)
        if let owed = lane.owed {
            items.append(owed.item)
            lanes[index].owed = nil
        }
        for sequence in lane.cursor..<stop {
            items.append(ring[(head + sequence - base) % capacity]!)
        }
        lanes[index].inFlightFrom = lane.owed?.sequence ?? lane.cursor
        lanes[index].cursor = stop
        lanes[index].wait = .busy
        trim()
        return items
    }

    /// Marks a lane's batch as delivered.
    mutating func finish(lane index: Int) {
        lanes[index].inFlightFrom = nil
    }

    /// Records how a lane waits.
    mutating func setWait(lane index: Int, _ wait: Wait) {
        lanes[index].wait = wait
    }

    /// Whether a lane has nothing left to take and the queue is closed: its thread may end.
    func isFinished(lane index: Int) -> Bool {
        isClosed && ((lanes[index].cursor == end && lanes[index].owed == nil) || !lanes[index].isEnabled)
    }

    /// Stops taking items.
    /// - Returns: whether a lane is asleep and must be woken to notice.
    mutating func close() -> Bool {
        isClosed = true
        var mustWake = false
        for index in lanes.indices where lanes[index].wait == .sleeping {
            lanes[index].wait = .busy
            mustWake = true
        }
        return mustWake
    }

    /// Removes and returns every held item; for handing a tracker's queue to another before
    /// tracking started.
    mutating func removeAll() -> [Item] {
        var items: [Item] = owedBeforeStart.map { [$0.item] } ?? []
        owedBeforeStart = nil
        for sequence in base..<end {
            let slot = (head + sequence - base) % capacity
            items.append(ring[slot]!)
            ring[slot] = nil
        }
        head = (head + count) % capacity
        base = end
        for index in lanes.indices where lanes[index].cursor < end { lanes[index].cursor = end }
        return items
    }

    // MARK: Internals

    private mutating func evictOldest() {
        let oldest = ring[head]!
        let owed = isOwed(oldest)
        if !isStarted {
            if owed { owedBeforeStart = (oldest, base) } else { droppedBeforeStart += 1 }
        }
        for index in lanes.indices where lanes[index].cursor == base {
            lanes[index].cursor += 1
            if owed { lanes[index].owed = (oldest, base) } else { lanes[index].dropped += 1 }
        }
        popHead()
    }

    /// Releases the items every lane has taken.
    private mutating func trim() {
        var oldestNeeded = end
        for lane in lanes where lane.isEnabled { oldestNeeded = min(oldestNeeded, lane.cursor) }
        while base < oldestNeeded { popHead() }
    }

    private mutating func popHead() {
        ring[head] = nil
        head = (head + 1) % capacity
        base += 1
    }
}
