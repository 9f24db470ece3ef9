/// A fast, seeded random number generator (SplitMix64) for reproducible jitter and test plans.
///
/// The same seed always yields the same sequence on every platform, so a backoff schedule or a
/// fault-injection plan that made a test fail can be replayed exactly. Not for cryptography.
///
/// ```swift
/// var random = SeededRandomNumberGenerator(seed: 42)
/// let delay = backoff.recordFailure(at: now, using: &random)
/// ```
public struct SeededRandomNumberGenerator: RandomNumberGenerator, Sendable, Hashable {
    /// The generator's state; save it to resume the sequence later.
    public private(set) var state: UInt64

    /// Creates a generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
