import TouchpointCore

/// A Bloom filter over the keys in `message_keys`: a new event's key that the filter has not seen
/// is in no page of the table, so ingest skips reading one.
///
/// With random message ids each new key falls on a random page of `message_keys`. The filter
/// answers from six bits instead. It never misses a key it was given (a key in the table is
/// always looked up); a key it was not given passes it now and then (about 0.25 % of them just
/// after it is built, two thirds full, 1.1 % at its capacity) and is then looked up as before, in
/// each era of the table. At 50 million events, with the table's pages no longer all in memory,
/// each of those lookups read pages from disk: with three bits of eight a key (1.2–3.2 %) the
/// lookups cost the writer up to 13 µs an event; ten bits a key and six set take a quarter as
/// many lookups for a quarter more memory.
///
/// Only a key's low 56 bits count: `message_keys` keeps an era in the top byte
/// (``MessageKeyIndex/storedKey(_:seq:)``), so a key and its stored form are the same to the filter.
///
/// Blocked: a key's bits lie in one 512-bit block (a cache line's worth), picked by bits 27 to 55
/// of the key, the bits by bits 0 to 17 (the keys are keyed hashes, so those bits are independent
/// and uniform). A lookup then touches one block, and building it from `message_keys`, which is
/// read in key order (an era at a time), walks the blocks in order (with the bits anywhere, the
/// inserts of a build from 11.8 million keys were a quarter of the collector's samples; in
/// blocks, 2 %). 10 bits per key of its capacity.
struct MessageKeyFilter: Sendable {
    private var words: [UInt64]
    private let blocks: UInt64
    /// Keys given to it (a key given twice counts twice).
    private(set) var count = 0
    /// Keys it is sized for: beyond that its false positives grow, and it should be built again.
    let capacity: Int

    /// Bits per key of its capacity.
    static let bitsPerKey = 10
    /// Bits set per key (in its block, by ``bit(_:index:)``).
    private static let bitsPerKeyInserted: UInt64 = 6
    /// Words per block.
    private static let blockWords = 8

    /// The most keys a filter is sized for (640 MB).
    static let maximumCapacity = 1 << 29

    /// An empty filter sized for `capacity` keys (at least 64, at most ``maximumCapacity``).
    init(capacity: Int) {
        self.capacity = min(max(capacity, 64), Self.maximumCapacity)
        let blocks = (self.capacity * Self.bitsPerKey + 511) / 512
        words = [UInt64](repeating: 0, count: blocks * Self.blockWords)
        self.blocks = UInt64(blocks)
    }

    private init(capacity: Int, count: Int, words: [UInt64]) {
        self.capacity = capacity
        self.count = count
        self.words = words
        blocks = UInt64(words.count / Self.blockWords)
    }

    /// The first word of `key`'s block: bits 27 to 55 of the key mapped onto `0 ..< blocks` by a
    /// multiply and shift (at most 10,485,760 blocks: the product fits in 53 bits).
    private func block(_ value: UInt64) -> Int {
        Int((((value >> 27) & 0x1FFF_FFFF) &* blocks) >> 29) * Self.blockWords
    }

    /// The word (from the block's first) and bit of a key's `index`th bit, by double hashing in
    /// the block: from the place bits 0 to 8 name, `index` steps of the size bits 9 to 17 name,
    /// made odd (512 is a power of two, so the six places a key sets are six different ones).
    private static func bit(_ value: UInt64, index: UInt64) -> (word: Int, bit: UInt64) {
        let place = ((value & 511) &+ index &* ((value >> 9) & 511 | 1)) & 511
        return (Int(place >> 6), 1 << (place & 63))
    }

    mutating func insert(_ key: Int64) {
        let value = UInt64(bitPattern: key)
        let base = block(value)
        for index in 0..<Self.bitsPerKeyInserted {
            let place = Self.bit(value, index: index)
            words[base + place.word] |= place.bit
        }
        count += 1
    }

    /// False when `key` was never inserted; true when it was, and for a few keys that were not.
    func mayContain(_ key: Int64) -> Bool {
        let value = UInt64(bitPattern: key)
        let base = block(value)
        for index in 0..<Self.bitsPerKeyInserted {
            let place = Self.bit(value, index: index)
            if words[base + place.word] & place.bit == 0 { return false }
        }
        return true
    }

    /// Whether it holds more keys than it was sized for, and a larger one could be built.
    var isFull: Bool { count > capacity && capacity < Self.maximumCapacity }

    /// Bytes it holds.
    var bytes: Int { words.count * 8 }

    // MARK: Saved

    /// Why a saved filter was not taken.
    enum Rejection: Error, Equatable, CustomStringConvertible {
        /// Not a saved filter of this format (or of another version of it), or cut short.
        case unreadable
        /// Saved for another database (another secret of message keys).
        case otherDatabase
        /// Saved when the database's watermark was another: keys were merged after it was saved.
        case otherWatermark(saved: Int64)
        /// Its checksum does not match its bits.
        case damaged

        var description: String {
            switch self {
            case .unreadable: "it is not a saved filter this collector reads"
            case .otherDatabase: "it was saved for another database"
            case .otherWatermark(let saved): "it was saved with keys merged through seq \(saved), not this database's"
            case .damaged: "its checksum does not match"
            }
        }
    }

    /// The file's first bytes, and the version of its layout (a change to what `message_keys`
    /// holds or to how a key sets its bits makes saved filters unusable: change the version).
    private static let magic = Array("TPKEYFLT".utf8)
    private static let version: UInt64 = 2
    /// Header words after the magic: version, database, watermark, capacity, count, words,
    /// checksum.
    private static let headerWords = 7

    /// Bytes before the words: the magic and the header.
    private static let headerBytes = magic.count + 8 * headerWords

    /// Saves the filter in the file at `path` (owner-only, replaced whole or not at all): a header
    /// naming the database (`identity`, a key only its secret gives) and the watermark the filter
    /// is complete for, then its words, all little-endian, with a checksum over header and words.
    /// The words are written from where they are kept, not copied first (76 MB at 48 million
    /// keys). Not fsynced (that would put tens of MB before the next commits' log syncs): after a
    /// crash of the machine the file is either one complete for some watermark, or fails its
    /// checksum or size, and is not taken.
    func save(to path: String, identity: Int64, watermark: Int64) throws(FileError) {
        try AtomicFile.write(to: path, durable: false, mode: 0o600) { (append) throws(FileError) in
            try write(identity: identity, watermark: watermark, append)
        }
    }

    /// Writes the saved form (``save(to:identity:watermark:)``) through `append`, in order.
    func write(
        identity: Int64, watermark: Int64, _ append: (UnsafeRawBufferPointer) throws(FileError) -> Void
    ) throws(FileError) {
        var header: [UInt64] = [
            Self.version, UInt64(bitPattern: identity), UInt64(bitPattern: watermark), UInt64(capacity),
            UInt64(count), UInt64(words.count),
        ]
        header.append(Self.checksum(header, words))
        let start = Self.magic + header.flatMap { word in withUnsafeBytes(of: word.littleEndian, Array.init) }
        try start.withUnsafeBytes { raw in Result { () throws(FileError) in try append(raw) } }.get()
        #if _endian(little)
        try words.withUnsafeBytes { raw in Result { () throws(FileError) in try append(raw) } }.get()
        #else
        for word in words {
            try withUnsafeBytes(of: word.littleEndian) { raw in Result { () throws(FileError) in try append(raw) } }
                .get()
        }
        #endif
    }

    /// The filter saved in the file at `path`, when it was saved for the database `identity` at
    /// `watermark` and is intact (nil: there is no such file), read straight into its words.
    static func restored(fromFile path: String, identity: Int64, watermark: Int64) throws -> Result<Self, Rejection>? {
        try AtomicFile.read(path) { size, reader in
            try restored(size: size, identity: identity, watermark: watermark) { try reader.fill($0) }
        }
    }

    /// The filter saved in `size` bytes that `fill` gives in order (each call fills its buffer
    /// with the next bytes), when it was saved for the database `identity` at `watermark` and is
    /// intact.
    static func restored(
        size: Int, identity: Int64, watermark: Int64, fill: (UnsafeMutableRawBufferPointer) throws -> Void
    ) throws -> Result<Self, Rejection> {
        guard size >= headerBytes else { return .failure(.unreadable) }
        var start = [UInt8](repeating: 0, count: headerBytes)
        try start.withUnsafeMutableBytes(fill)
        guard Array(start[0..<magic.count]) == magic else { return .failure(.unreadable) }
        let header = start.withUnsafeBytes { raw in
            (0..<headerWords).map {
                UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: magic.count + 8 * $0, as: UInt64.self))
            }
        }
        let (capacity, count, wordCount) = (
            Int(clamping: header[3]), Int(clamping: header[4]), Int(clamping: header[5])
        )
        guard header[0] == version, (64...maximumCapacity).contains(capacity),
            wordCount == (capacity * bitsPerKey + 511) / 512 * blockWords, size == headerBytes + 8 * wordCount
        else { return .failure(.unreadable) }
        guard Int64(bitPattern: header[1]) == identity else { return .failure(.otherDatabase) }
        guard Int64(bitPattern: header[2]) == watermark else {
            return .failure(.otherWatermark(saved: Int64(bitPattern: header[2])))
        }
        var words = [UInt64](repeating: 0, count: wordCount)
        try words.withUnsafeMutableBytes(fill)
        #if !_endian(little)
        for index in words.indices { words[index] = UInt64(littleEndian: words[index]) }
        #endif
        guard checksum(Array(header[0..<6]), words) == header[6] else { return .failure(.damaged) }
        return .success(Self(capacity: capacity, count: count, words: words))
    }

    /// A 64-bit checksum of the header's words and the filter's (any bit changed changes it,
    /// almost surely).
    private static func checksum(_ header: [UInt64], _ words: [UInt64]) -> UInt64 {
        var sum: UInt64 = 0x5450_4B45_5946_4C54
        func mix(_ word: UInt64) {
            sum = (sum ^ word) &* 0x9E37_79B9_7F4A_7C15
            sum ^= sum >> 29
        }
        for word in header { mix(word) }
        for word in words { mix(word) }
        return sum
    }
}
