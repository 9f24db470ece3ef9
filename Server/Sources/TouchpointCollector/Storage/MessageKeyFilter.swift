/// A Bloom filter over the keys in `message_keys`: a new event's key that the filter has not seen
/// is in no page of the table, so ingest skips reading one.
///
/// With random message ids each new key falls on a random page of `message_keys`. The filter
/// answers from three bits instead. It never misses a key it was given (a key in the table is
/// always looked up); a key it was not given passes it now and then (about 1 % of them just after
/// it is built, 3 % at its capacity; with two bits a key, 2.5 % and 5 %) and is then looked up as
/// before.
///
/// Only a key's low 56 bits count: `message_keys` keeps an era in the top byte
/// (``MessageKeyIndex/storedKey(_:seq:)``), so a key and its stored form are the same to the filter.
///
/// Blocked: a key's bits lie in one 512-bit block (a cache line's worth), picked by bits 27 to 55
/// of the key, the bits by bits 0 to 26 (the keys are keyed hashes, so the pieces are independent
/// and uniform). A lookup then touches one block, and building it from `message_keys`, which is
/// read in key order (an era at a time), walks the blocks in order (with the bits anywhere, the
/// inserts of a build from 11.8 million keys were a quarter of the collector's samples; in
/// blocks, 2 %). 8 bits per key of its capacity.
struct MessageKeyFilter: Sendable {
    private var words: [UInt64]
    private let blocks: UInt64
    /// Keys given to it (a key given twice counts twice).
    private(set) var count = 0
    /// Keys it is sized for: beyond that its false positives grow, and it should be built again.
    let capacity: Int

    /// Bits per key of its capacity.
    static let bitsPerKey = 8
    /// Bits set per key (three 9-bit pieces of the key's low half).
    private static let bitsPerKeyInserted: UInt64 = 3
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

    /// The first word of `key`'s block: bits 27 to 55 of the key mapped onto `0 ..< blocks` by a
    /// multiply and shift (at most 2^23 blocks: the product fits).
    private func block(_ value: UInt64) -> Int {
        Int((((value >> 27) & 0x1FFF_FFFF) &* blocks) >> 29) * Self.blockWords
    }

    /// The word (from the block's first) and bit of the `piece`th 9-bit piece of bits 0 to 26.
    private static func bit(_ value: UInt64, piece: UInt64) -> (word: Int, bit: UInt64) {
        let place = (value >> (9 * piece)) & 511
        return (Int(place >> 6), 1 << (place & 63))
    }

    mutating func insert(_ key: Int64) {
        let value = UInt64(bitPattern: key)
        let base = block(value)
        for piece in 0..<Self.bitsPerKeyInserted {
            let place = Self.bit(value, piece: piece)
            words[base + place.word] |= place.bit
        }
        count += 1
    }

    /// False when `key` was never inserted; true when it was, and for a few keys that were not.
    func mayContain(_ key: Int64) -> Bool {
        let value = UInt64(bitPattern: key)
        let base = block(value)
        for piece in 0..<Self.bitsPerKeyInserted {
            let place = Self.bit(value, piece: piece)
            if words[base + place.word] & place.bit == 0 { return false }
        }
        return true
    }

    /// Whether it holds more keys than it was sized for, and a larger one could be built.
    var isFull: Bool { count > capacity && capacity < Self.maximumCapacity }

    /// Bytes it holds.
    var bytes: Int { words.count * 8 }
}
