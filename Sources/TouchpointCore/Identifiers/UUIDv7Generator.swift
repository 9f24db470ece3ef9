import Foundation

/// Makes time-ordered UUIDs (RFC 9562 version 7) for message ids.
///
/// The first 48 bits are the Unix time in milliseconds, so ids sort by creation time and a
/// collector's index stays append-mostly; 74 bits come from a xoshiro256** generator seeded
/// from the system's secure random source. Generation costs a few nanoseconds and no system
/// call, which matters on the record path. Not thread-safe: keep one behind a lock.
public struct UUIDv7Generator: Sendable {
    private var state: (UInt64, UInt64, UInt64, UInt64)

    /// Creates a generator seeded from the system's secure random source.
    public init() {
        var system = SystemRandomNumberGenerator()
        state = (system.next(), system.next(), system.next(), system.next())
        if state == (0, 0, 0, 0) { state.0 = 0x9E37_79B9_7F4A_7C15 }
    }

    /// Creates a generator with a fixed seed, for reproducible tests.
    public init(seed: UInt64) {
        var splitmix = seed
        func next() -> UInt64 {
            splitmix &+= 0x9E37_79B9_7F4A_7C15
            var mixed = splitmix
            mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
            mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
            return mixed ^ (mixed >> 31)
        }
        state = (next(), next(), next(), next())
    }

    /// The next 64 random bits.
    public mutating func nextRandom() -> UInt64 {
        let result = rotateLeft(state.1 &* 5, 7) &* 9
        let shifted = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= shifted
        state.3 = rotateLeft(state.3, 45)
        return result
    }

    /// A version-7 UUID for the instant `date`.
    public mutating func next(at date: Date) -> UUID {
        let milliseconds = UInt64(max(0, (date.timeIntervalSince1970 * 1000).rounded(.down)))
        let randomA = nextRandom()
        let randomB = nextRandom()
        let high = (milliseconds << 16) | 0x7000 | (randomA & 0x0FFF)
        let low = (randomB & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        let h = high.bigEndian
        let l = low.bigEndian
        return withUnsafeBytes(of: (h, l)) { raw in
            UUID(
                uuid: (
                    raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                    raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]
                ))
        }
    }

    private func rotateLeft(_ value: UInt64, _ amount: UInt64) -> UInt64 {
        (value << amount) | (value >> (64 - amount))
    }
}
