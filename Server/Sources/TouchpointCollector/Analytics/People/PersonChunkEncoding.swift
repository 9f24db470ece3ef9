/// How a chunk of a ``PersonSet`` is stored in `daily_people.bits` (``DailyPeopleRollup``).
///
/// A first byte of 0 is followed by the chunk's offsets (0…4095) as strictly ascending 16-bit
/// big-endian integers; a first byte of 1 by its bitmap, 512 bytes in which offset `n` is bit
/// `n % 8` of byte `n / 8`. Chunks of fewer than 256 people are written as lists (at most 511
/// bytes), fuller ones as bitmaps (513), so a rare event's chunk costs two bytes a person and a
/// frequent one's never more than 513. The list form is what PostgreSQL builds in SQL at ingest
/// (`int2send` gives big-endian bytes), of any length.
enum PersonChunkEncoding {
    static let listTag: UInt8 = 0
    static let bitmapTag: UInt8 = 1
    /// The bitmap's length in bytes, after its tag.
    static let bitmapBytes = PersonSet.chunkSize / 8
    /// The most offsets written as a list.
    static let maximumListed = 255

    /// The stored bytes of `chunk`.
    static func encode(_ chunk: PersonSet.Chunk) -> [UInt8] {
        let count = chunk.count
        if count <= maximumListed {
            var bytes: [UInt8] = [listTag]
            bytes.reserveCapacity(1 + count * 2)
            for offset in chunk.offsets {
                bytes.append(UInt8(offset >> 8))
                bytes.append(UInt8(offset & 0xFF))
            }
            return bytes
        }
        var bytes = [UInt8](repeating: 0, count: 1 + bitmapBytes)
        bytes[0] = bitmapTag
        for (index, word) in chunk.words.enumerated() {
            for byte in 0..<8 { bytes[1 + index * 8 + byte] = UInt8(truncatingIfNeeded: word >> UInt64(byte * 8)) }
        }
        return bytes
    }

    /// The chunk stored as `bytes`; nil when they are neither form (no tag, a bitmap of another
    /// length, a list of odd length or with an offset out of order or out of range).
    static func decode<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes) -> PersonSet.Chunk? {
        guard let tag = bytes.first else { return nil }
        var chunk = PersonSet.Chunk()
        var position = bytes.index(after: bytes.startIndex)
        switch tag {
        case bitmapTag:
            guard bytes.count == 1 + bitmapBytes else { return nil }
            for index in 0..<PersonSet.wordsPerChunk {
                var word: UInt64 = 0
                for byte in 0..<8 {
                    word |= UInt64(bytes[position]) << UInt64(byte * 8)
                    position = bytes.index(after: position)
                }
                chunk.words[index] = word
            }
            return chunk
        case listTag:
            guard bytes.count % 2 == 1 else { return nil }
            var previous = -1
            while position != bytes.endIndex {
                let next = bytes.index(after: position)
                let offset = Int(bytes[position]) << 8 | Int(bytes[next])
                guard offset > previous, offset < PersonSet.chunkSize else { return nil }
                chunk.insert(offset)
                previous = offset
                position = bytes.index(after: next)
            }
            return chunk
        default:
            return nil
        }
    }

    /// The union of two stored chunks, stored; nil when either is not a stored chunk.
    static func union<A: RandomAccessCollection<UInt8>, B: RandomAccessCollection<UInt8>>(_ a: A, _ b: B)
        -> [UInt8]?
    {
        guard var chunk = decode(a), let other = decode(b) else { return nil }
        chunk.formUnion(other)
        return encode(chunk)
    }
}
