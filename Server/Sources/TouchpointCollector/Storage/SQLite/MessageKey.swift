/// The 64-bit key SQLite deduplicates on: SipHash-2-4 of `source`, a zero byte and `messageId`,
/// under a secret drawn once per database.
///
/// The secret matters: whoever holds a public write key chooses message ids, and with a known hash
/// function could choose thousands that share one key, so that each of them is compared with all
/// the others. Without the secret, two ids share a key only by chance (about once in 5 × 10¹⁰ pairs
/// of ids, i.e. a few times among a billion events), and then both are stored, as they must be: a
/// key is only where to look, the full (source, messageId) decides.
struct MessageKey: Sendable, Equatable {
    let k0: UInt64
    let k1: UInt64

    /// The key function under the 16-byte secret `secret` (little-endian halves, as SipHash's
    /// reference reads its key).
    init?(secret: some Collection<UInt8>) {
        guard secret.count == 16 else { return nil }
        let bytes = Array(secret)
        k0 = Self.littleEndian(bytes, at: 0)
        k1 = Self.littleEndian(bytes, at: 8)
    }

    /// The key of (source, messageId).
    func callAsFunction(source: String, messageId: String) -> Int64 {
        var source = source
        var messageId = messageId
        return source.withUTF8 { source in
            messageId.withUTF8 { messageId in key(source: source, messageId: messageId) }
        }
    }

    /// The key of (source, messageId) given as UTF-8.
    func key(source: UnsafeBufferPointer<UInt8>, messageId: UnsafeBufferPointer<UInt8>) -> Int64 {
        var hasher = SipHash24(k0: k0, k1: k1)
        hasher.append(source)
        hasher.append(0)
        hasher.append(messageId)
        return Int64(bitPattern: hasher.finalize())
    }

    private static func littleEndian(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
    }
}

/// SipHash-2-4 (the 64-bit output), fed incrementally.
struct SipHash24 {
    private var v0: UInt64
    private var v1: UInt64
    private var v2: UInt64
    private var v3: UInt64
    /// Bytes not yet compressed (fewer than eight), little-endian in `tail`.
    private var tail: UInt64 = 0
    private var tailCount: UInt64 = 0
    private var length: UInt64 = 0

    init(k0: UInt64, k1: UInt64) {
        v0 = k0 ^ 0x736f_6d65_7073_6575
        v1 = k1 ^ 0x646f_7261_6e64_6f6d
        v2 = k0 ^ 0x6c79_6765_6e65_7261
        v3 = k1 ^ 0x7465_6462_7974_6573
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        var index = 0
        // Top up a partial word first, then whole words straight from the buffer.
        while tailCount != 0, index < bytes.count {
            append(bytes[index])
            index += 1
        }
        while bytes.count - index >= 8 {
            var word: UInt64 = 0
            for offset in 0..<8 { word |= UInt64(bytes[index + offset]) << (8 * UInt64(offset)) }
            compress(word)
            index += 8
            length &+= 8
        }
        while index < bytes.count {
            append(bytes[index])
            index += 1
        }
    }

    mutating func append(_ byte: UInt8) {
        tail |= UInt64(byte) << (8 * tailCount)
        tailCount += 1
        length &+= 1
        if tailCount == 8 {
            compress(tail)
            tail = 0
            tailCount = 0
        }
    }

    mutating func finalize() -> UInt64 {
        compress(tail | (length & 0xff) << 56)
        v2 ^= 0xff
        for _ in 0..<4 { round() }
        return v0 ^ v1 ^ v2 ^ v3
    }

    private mutating func compress(_ word: UInt64) {
        v3 ^= word
        round()
        round()
        v0 ^= word
    }

    private mutating func round() {
        v0 &+= v1
        v1 = v1.rotated(13) ^ v0
        v0 = v0.rotated(32)
        v2 &+= v3
        v3 = v3.rotated(16) ^ v2
        v0 &+= v3
        v3 = v3.rotated(21) ^ v0
        v2 &+= v1
        v1 = v1.rotated(17) ^ v2
        v2 = v2.rotated(32)
    }
}

extension UInt64 {
    fileprivate func rotated(_ bits: UInt64) -> UInt64 { self << bits | self >> (64 - bits) }
}
