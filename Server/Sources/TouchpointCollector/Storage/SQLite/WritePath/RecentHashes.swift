/// A fixed number of slots, each holding the last hash that picked it (by its low bits) and a
/// value: what a writer remembers of the keys it saw recently, as a hint it checks against the
/// database (a hash loses its slot to the next one that picks it).
struct RecentHashes<Value> {
    private var hashes: [Int]
    private var values: [Value?]
    private let mask: Int

    /// - Parameter slots: a power of two.
    init(slots: Int) {
        precondition(slots > 0 && slots & (slots - 1) == 0, "RecentHashes needs a power of two of slots")
        hashes = Array(repeating: 0, count: slots)
        values = Array(repeating: nil, count: slots)
        mask = slots - 1
    }

    /// The value last set for `hash`, unless another hash took its slot since; setting nil forgets
    /// `hash` (and leaves another hash's slot alone).
    subscript(hash: Int) -> Value? {
        get {
            let slot = hash & mask
            return hashes[slot] == hash ? values[slot] : nil
        }
        set {
            let slot = hash & mask
            if let newValue {
                hashes[slot] = hash
                values[slot] = newValue
            } else if hashes[slot] == hash {
                hashes[slot] = 0
                values[slot] = nil
            }
        }
    }
}
