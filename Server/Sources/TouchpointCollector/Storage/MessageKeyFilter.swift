/// A Bloom filter over the keys in `message_keys`: a new event's key that the filter has not seen
/// is in no page of the table, so ingest skips reading one.
///
/// With random message ids each new key falls on a random page of `message_keys`. The filter
/// answers from two bits instead. It never misses a key it was given (a key in the table is always
/// looked up); a key it was not given passes it now and then (about 2 % of them just after it is
/// built, 5 % at its capacity) and is then looked up as before.
///
/// Blocked: a key's two bits lie in one 512-bit block (a cache line's worth), picked by the high
/// half of the key, the bits by its low half (the keys are keyed hashes, so the halves are
/// independent and uniform). A lookup then touches one block, and building it from
/// `message_keys`, which is read in key order, walks the blocks in order (with the two bits
/// anywhere, the inserts of a build from 11.8 million keys were a quarter of the collector's
/// samples; in blocks, 2 %). 8 bits per key of its capacity.
struct MessageKeyFilter: Sendable {
    private var words: [UInt64]
    private let blocks: UInt64
    /// Keys given to it (a key given twice counts twice).
    private(set) var count = 0
    /// Keys it is sized for: beyond that its false positives grow, and it should be built again.
    let capacity: Int

    /// Bits per key of its capacity.
    static let bitsPerKey = 8
    /// Words per block.
    private static let blockWords = 8

    /// The most keys a filter is sized for (512 MB).
    static let maximumCapacity = 1 << 29

    /// An empty filter sized for `capacity` keys (at least 64, at most ``maximumCapacity``).
    init(capacity: Int) {
        self.capacity = min(max(capacity, 64), Self.maximumCapacity)
        let blocks = (self.capacity * Self.bitsPerKey + 511) / 512
        words = [UInt64](repeating: 0, count: blocks * Self.blockWords)
        self.blocks = UInt64(blocks)
    }

    /// The words and bits of `key`: its block is the high half of the key mapped onto
    /// `0 ..< blocks` by a multiply and shift; the bits' places in it, two 9-bit pieces of the
    /// low half.
    private func positions(_ key: Int64) -> (first: Int, firstBit: UInt64, second: Int, secondBit: UInt64) {
        let value = UInt64(bitPattern: key)
        let base = Int(((value >> 32) &* blocks) >> 32) * Self.blockWords
        let first = value & 511
        let second = (value >> 9) & 511
        return (base + Int(first >> 6), 1 << (first & 63), base + Int(second >> 6), 1 << (second & 63))
    }

    mutating func insert(_ key: Int64) {
        let place = positions(key)
        words[place.first] |= place.firstBit
        words[place.second] |= place.secondBit
        count += 1
    }

    /// False when `key` was never inserted; true when it was, and for a few keys that were not.
    func mayContain(_ key: Int64) -> Bool {
        let place = positions(key)
        return words[place.first] & place.firstBit != 0 && words[place.second] & place.secondBit != 0
    }

    /// Whether it holds more keys than it was sized for, and a larger one could be built.
    var isFull: Bool { count > capacity && capacity < Self.maximumCapacity }

    /// Bytes it holds.
    var bytes: Int { words.count * 8 }
}
