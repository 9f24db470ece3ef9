/// A problem with a survey gating file: it was unreadable or corrupt (and was ignored, so the
/// user starts with an empty history), or could not be written.
public struct SurveyStateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem, stable across releases.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case unreadable, corrupt, writeFailed
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// The file exists but could not be read.
        public static let unreadable = Code(.unreadable)
        /// The file is not a gating history (moved aside to `<file>.corrupt`).
        public static let corrupt = Code(.corrupt)
        /// The file could not be written; the history is kept in memory.
        public static let writeFailed = Code(.writeFailed)

        /// The code's name, e.g. `corrupt`.
        public var description: String { base.rawValue }
    }

    /// The kind of problem.
    public let code: Code
    /// The file.
    public let path: String
    /// What was wrong.
    public let message: String

    /// Creates an error.
    public init(code: Code, path: String, message: String) {
        self.code = code
        self.path = path
        self.message = message
    }

    public var description: String { "\(code) \(path): \(message)" }
}
