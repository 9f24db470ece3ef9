/// A set of person numbers (``PersonKeys``), as bitmaps of 4,096 numbers each.
///
/// The daily-people rollup stores one of these per source, event, day and side (see
/// ``DailyPeopleRollup``), one row per chunk of 4,096 numbers; an insight reads the chunks of the
/// days it covers and answers with unions, intersections and counts of these sets rather than by
/// reading events. Numbers are given in the order people are first seen, so a source's people
/// fill few chunks densely.
struct PersonSet: Sendable, Equatable {
    /// Numbers per chunk, as a power of two.
    static let chunkShift = 12
    /// Numbers per chunk.
    static let chunkSize = 1 << chunkShift
    /// 64-bit words per chunk's bitmap.
    static let wordsPerChunk = chunkSize / 64

    /// The non-empty chunks by index (a number's chunk is `number >> chunkShift`).
    private(set) var chunks: [Int64: Chunk] = [:]

    init() {}

    /// A set of `numbers`.
    init<Numbers: Sequence<Int64>>(_ numbers: Numbers) {
        for number in numbers { insert(number) }
    }

    /// One chunk's bitmap: bit `n & 4095` of word `(n & 4095) / 64` is number `n`.
    struct Chunk: Sendable, Equatable {
        var words: [UInt64]

        init() { words = Array(repeating: 0, count: PersonSet.wordsPerChunk) }
        init(words: [UInt64]) { self.words = words }

        var count: Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }
        var isEmpty: Bool { words.allSatisfy { $0 == 0 } }

        func contains(_ offset: Int) -> Bool { words[offset >> 6] & (1 << UInt64(offset & 63)) != 0 }

        /// Sets the bit of `offset`; true when it was not set.
        @discardableResult
        mutating func insert(_ offset: Int) -> Bool {
            let mask: UInt64 = 1 << UInt64(offset & 63)
            let word = words[offset >> 6]
            guard word & mask == 0 else { return false }
            words[offset >> 6] = word | mask
            return true
        }

        mutating func remove(_ offset: Int) { words[offset >> 6] &= ~(1 << UInt64(offset & 63)) }

        mutating func formUnion(_ other: Chunk) {
            for index in 0..<PersonSet.wordsPerChunk { words[index] |= other.words[index] }
        }

        /// The offsets of the set bits, in order.
        var offsets: [Int] {
            var found: [Int] = []
            for (index, word) in words.enumerated() where word != 0 {
                var rest = word
                while rest != 0 {
                    found.append(index << 6 | rest.trailingZeroBitCount)
                    rest &= rest - 1
                }
            }
            return found
        }
    }

    var isEmpty: Bool { chunks.isEmpty }

    /// How many numbers the set holds.
    var count: Int { chunks.values.reduce(0) { $0 + $1.count } }

    func contains(_ number: Int64) -> Bool {
        chunks[number >> Int64(Self.chunkShift)]?.contains(Int(number & Int64(Self.chunkSize - 1))) ?? false
    }

    /// Adds `number`; true when it was not in the set.
    @discardableResult
    mutating func insert(_ number: Int64) -> Bool {
        let offset = Int(number & Int64(Self.chunkSize - 1))
        return chunks[number >> Int64(Self.chunkShift), default: Chunk()].insert(offset)
    }

    mutating func remove(_ number: Int64) {
        let index = number >> Int64(Self.chunkShift)
        guard var chunk = chunks[index] else { return }
        chunk.remove(Int(number & Int64(Self.chunkSize - 1)))
        chunks[index] = chunk.isEmpty ? nil : chunk
    }

    /// Adds the numbers of chunk `index`.
    mutating func formUnion(chunk index: Int64, _ chunk: Chunk) {
        guard !chunk.isEmpty else { return }
        if var existing = chunks[index] {
            existing.formUnion(chunk)
            chunks[index] = existing
        } else {
            chunks[index] = chunk
        }
    }

    mutating func formUnion(_ other: PersonSet) {
        for (index, chunk) in other.chunks { formUnion(chunk: index, chunk) }
    }

    func union(_ other: PersonSet) -> PersonSet {
        var result = self
        result.formUnion(other)
        return result
    }

    func intersection(_ other: PersonSet) -> PersonSet {
        var result = PersonSet()
        let (small, large) = chunks.count <= other.chunks.count ? (self, other) : (other, self)
        for (index, chunk) in small.chunks {
            guard let match = large.chunks[index] else { continue }
            var words = chunk.words
            var any: UInt64 = 0
            for word in 0..<Self.wordsPerChunk {
                words[word] &= match.words[word]
                any |= words[word]
            }
            if any != 0 { result.chunks[index] = Chunk(words: words) }
        }
        return result
    }

    func subtracting(_ other: PersonSet) -> PersonSet {
        var result = PersonSet()
        for (index, chunk) in chunks {
            guard let match = other.chunks[index] else {
                result.chunks[index] = chunk
                continue
            }
            var words = chunk.words
            var any: UInt64 = 0
            for word in 0..<Self.wordsPerChunk {
                words[word] &= ~match.words[word]
                any |= words[word]
            }
            if any != 0 { result.chunks[index] = Chunk(words: words) }
        }
        return result
    }

    /// How many numbers both sets hold, without building the intersection.
    func intersectionCount(_ other: PersonSet) -> Int {
        let (small, large) = chunks.count <= other.chunks.count ? (self, other) : (other, self)
        var total = 0
        for (index, chunk) in small.chunks {
            guard let match = large.chunks[index] else { continue }
            for word in 0..<Self.wordsPerChunk { total += (chunk.words[word] & match.words[word]).nonzeroBitCount }
        }
        return total
    }

    /// Every number in the set, in ascending order.
    var sorted: [Int64] {
        chunks.keys.sorted().flatMap { index in
            chunks[index]!.offsets.map { index << Int64(Self.chunkShift) | Int64($0) }
        }
    }

    /// Calls `body` with every number in the set (in no particular order of chunks).
    func forEach(_ body: (Int64) -> Void) {
        for (index, chunk) in chunks {
            let base = index << Int64(Self.chunkShift)
            for (position, word) in chunk.words.enumerated() where word != 0 {
                var rest = word
                while rest != 0 {
                    body(base | Int64(position << 6 | rest.trailingZeroBitCount))
                    rest &= rest - 1
                }
            }
        }
    }
}
