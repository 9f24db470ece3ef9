/// Why compressing or decompressing bytes failed.
///
/// The ``code`` is stable (use it in comparisons and metrics); ``reason`` says what zlib reported
/// and where in the input.
///
/// ```
/// invalidData: not valid gzip or zlib data (zlib: incorrect header check) at input byte 0
/// ```
public struct CompressionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure, stable across releases.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case invalidData
            case tooLarge
            case failed
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// The input is not valid compressed data: a bad header, a corrupt stream, a wrong
        /// checksum, a stream cut short or followed by garbage.
        public static let invalidData = Code(.invalidData)
        /// The decompressed data would exceed the caller's limit (a "zip bomb", or just too big).
        public static let tooLarge = Code(.tooLarge)
        /// zlib itself failed (out of memory, a version mismatch).
        public static let failed = Code(.failed)

        /// The code's name, e.g. `invalidData`.
        public var description: String { base.rawValue }
    }

    /// The kind of failure.
    public let code: Code
    /// What went wrong, in words.
    public let reason: String

    /// Creates an error.
    public init(code: Code, reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code): \(reason)" }
}
