/// The live expressions' outputs, one slot per expression (by position in the graph's order), so
/// a recomputation reads its inputs and writes its result without hashing a key.
///
/// A slot is *known* when it holds the value at its output path; a known slot may be *stale*: the
/// value tree does not hold it yet. The tree catches up (``StoreState`` materializes the stale
/// slots) before anything reads it where a stale output could be seen; a write to the tree that
/// can change an output makes its slot unknown.
struct OutputSlots {
    private struct Slot {
        var value: StoreValue?
        var known = false
        var stale = false
        /// Whether a subscriber's path intersects the output, valid while the subscription index
        /// holds ``observedVersion``.
        var observed = false
        var observedVersion: VersionToken?
    }

    private var slots: [Slot]
    /// Positions of the stale slots, each once.
    private(set) var stale: [Int] = []

    /// Slots for `count` expressions, none known.
    init(count: Int = 0) {
        slots = [Slot](repeating: Slot(), count: count)
    }

    var hasStale: Bool { !stale.isEmpty }

    /// Whether the slot of `position` holds the value at its output.
    func isKnown(_ position: Int) -> Bool { slots[position].known }

    /// The value of a known slot.
    func value(_ position: Int) -> StoreValue? { slots[position].value }

    /// Records the value now at the output of `position`, written to the tree (`stale` false) or
    /// not yet (`stale` true).
    mutating func set(_ position: Int, _ value: StoreValue?, stale becomesStale: Bool) {
        slots[position].value = value
        slots[position].known = true
        guard becomesStale, !slots[position].stale else { return }
        slots[position].stale = true
        stale.append(position)
    }

    /// Puts `value` in the known slot of `position`, stale, unless it holds an equal value (the
    /// slot must be known).
    /// - Returns: nil when the slot held an equal value (nothing changed); else `.some` of the
    ///   value it held when `keepingOld`, `.some(nil)` otherwise.
    mutating func replace(_ position: Int, with value: StoreValue?, keepingOld: Bool) -> StoreValue?? {
        let (changed, old, becameStale) = slots.withUnsafeMutableBufferPointer { slots in
            let slot = slots.baseAddress! + position
            guard slot.pointee.value != value else { return (false, StoreValue?.none, false) }
            let old = keepingOld ? slot.pointee.value : nil
            slot.pointee.value = value
            let becameStale = !slot.pointee.stale
            slot.pointee.stale = true
            return (true, old, becameStale)
        }
        guard changed else { return nil }
        if becameStale { stale.append(position) }
        return .some(old)
    }

    /// Forgets the value of `position` (a write to the tree may have changed it).
    mutating func forget(_ position: Int) {
        slots[position].known = false
        slots[position].value = nil
    }

    /// Takes the stale positions; their values are about to be written to the tree.
    mutating func takeStale() -> [Int] {
        for position in stale { slots[position].stale = false }
        defer { stale.removeAll(keepingCapacity: true) }
        return stale
    }

    /// Whether a subscriber's path intersects the output of `position`, worked out with `compute`
    /// once per state of the subscription index (`version`).
    mutating func isObserved(_ position: Int, version: VersionToken, _ compute: () -> Bool) -> Bool {
        if slots[position].observedVersion !== version {
            slots[position].observed = compute()
            slots[position].observedVersion = version
        }
        return slots[position].observed
    }
}
