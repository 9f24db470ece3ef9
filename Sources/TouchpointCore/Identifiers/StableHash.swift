/// A 64-bit FNV-1a hash that is the same in every process and on every platform.
///
/// Swift's `Hasher` is seeded per process; anything persisted or compared across launches and
/// machines (sticky sampling, folder names, rotation order) uses this instead. Not for security.
public enum StableHash {
    /// The FNV-1a hash of the UTF-8 bytes of `text`.
    public static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }

    /// The hash of `text` as 16 lowercase hex digits.
    public static func hex(of text: String) -> String {
        let digits = String(fnv1a(text), radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// A number in `0..<1` derived from `text`, uniform enough for sampling decisions.
    public static func unitInterval(_ text: String) -> Double {
        // Mix once more (splitmix64 finalizer) so nearby inputs spread over the whole range.
        var mixed = fnv1a(text)
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        mixed ^= mixed >> 31
        return Double(mixed >> 11) / Double(UInt64(1) << 53)
    }
}
