/// Why a key path could not be read, pointing at the character.
///
/// Its description quotes the text and puts a caret under the offending character:
///
/// ```
/// invalid key path at character 8: expected ']', found '.'
///   items[0.title
///          ^
/// ```
public struct JSONPathSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable category of syntax error, usable in tests and metrics.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case empty, unexpectedCharacter, unexpectedEnd, invalidIndex, unterminatedString, invalidString
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The text was empty.
        public static let empty = Code(.empty)
        /// A character that cannot appear where it does.
        public static let unexpectedCharacter = Code(.unexpectedCharacter)
        /// The text ended in the middle of a step (after `.` or inside `[`).
        public static let unexpectedEnd = Code(.unexpectedEnd)
        /// An array index that is negative, has leading zeros or does not fit in `Int`.
        public static let invalidIndex = Code(.invalidIndex)
        /// A quoted key without its closing quote.
        public static let unterminatedString = Code(.unterminatedString)
        /// A quoted key that is not a valid JSON string (a bad escape, a control character).
        public static let invalidString = Code(.invalidString)

        /// The code's name, e.g. `unexpectedCharacter`.
        public var description: String { base.rawValue }
    }

    /// The text that was being read.
    public let text: String
    /// The UTF-8 byte offset of the offending character.
    public let offset: Int
    /// What kind of error.
    public let code: Code
    /// What was wrong, e.g. `expected ']', found '.'`.
    public let reason: String

    /// Creates an error.
    /// - Parameters:
    ///   - text: the text that was being read.
    ///   - offset: the UTF-8 byte offset of the offending character.
    ///   - code: what kind of error.
    ///   - reason: what was wrong.
    public init(text: String, offset: Int, code: Code, reason: String) {
        self.text = text
        self.offset = offset
        self.code = code
        self.reason = reason
    }

    /// The 0-based index of the offending character (a `Character`, as a user counts them).
    public var column: Int {
        String(decoding: text.utf8.prefix(offset), as: UTF8.self).count
    }

    /// Spaces then `^`, lining up under the offending character of ``text``.
    public var caretLine: String { String(repeating: " ", count: column) + "^" }

    /// The reason, then the text and a caret line under the offending character.
    public var description: String {
        "invalid key path at character \(column + 1): \(reason)\n  \(text)\n  \(caretLine)"
    }
}
