#if DEBUG
/// The last few changes of a store, oldest first, for the inspector (debug builds only).
struct RecentChanges {
    let capacity: Int
    private var storage: [StoreChange] = []
    private var next = 0

    init(capacity: Int) { self.capacity = Swift.max(0, capacity) }

    mutating func append(_ change: StoreChange) {
        guard capacity > 0 else { return }
        if storage.count < capacity {
            storage.append(change)
        } else {
            storage[next] = change
        }
        next = (next + 1) % capacity
    }

    /// Oldest first.
    var elements: [StoreChange] {
        storage.count < capacity ? storage : Array(storage[next...] + storage[..<next])
    }
}
#endif
