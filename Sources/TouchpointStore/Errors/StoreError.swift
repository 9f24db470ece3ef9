/// Something the scenario store refused or could not do: what, and at which key path.
///
/// ```
/// cart.total.amount: cart.total is a number, not an object
/// ```
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable category of store error, usable in tests and as a metric label.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case invalidKeyPath, typeMismatch, indexOutOfRange, wildcardWrite, notFound, validationFailed
            case dependencyCycle, duplicateOutput, reentrantWrite, feedbackLoop
            case conflict, backendFailure, noBackendAdapter, corruptData, fileFailure, dataDropped
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The key path text does not parse (see ``JSONPathSyntaxError``).
        public static let invalidKeyPath = Code(.invalidKeyPath)
        /// A step of the path meets a value of the wrong kind (a key into a number, an index into an object).
        public static let typeMismatch = Code(.typeMismatch)
        /// An index past the end of an array (writes may append at exactly the end).
        public static let indexOutOfRange = Code(.indexOutOfRange)
        /// A write to a path with a wildcard; writes need one concrete path.
        public static let wildcardWrite = Code(.wildcardWrite)
        /// No value at the path.
        public static let notFound = Code(.notFound)
        /// A validation rule rejected the write (strict mode, or lenient without a fix).
        public static let validationFailed = Code(.validationFailed)
        /// Live expressions that feed each other in a loop.
        public static let dependencyCycle = Code(.dependencyCycle)
        /// Two live expressions that write the same output.
        public static let duplicateOutput = Code(.duplicateOutput)
        /// A write from inside a live expression's computation, which must return its value instead.
        public static let reentrantWrite = Code(.reentrantWrite)
        /// Subscribers and the store kept triggering each other past the cascade limit.
        public static let feedbackLoop = Code(.feedbackLoop)
        /// The backend's copy changed since it was pulled (HTTP 412); nothing was overwritten.
        public static let conflict = Code(.conflict)
        /// The backend could not be reached or answered with an error.
        public static let backendFailure = Code(.backendFailure)
        /// A backend scope was synchronised without a ``StoreBackendAdapter``.
        public static let noBackendAdapter = Code(.noBackendAdapter)
        /// Persisted data that is not a store document (the store started empty and kept the bytes aside).
        public static let corruptData = Code(.corruptData)
        /// A file could not be read or written.
        public static let fileFailure = Code(.fileFailure)
        /// Persisted data written under another major version was dropped (see ``SemanticVersion``).
        public static let dataDropped = Code(.dataDropped)

        /// The code's name, e.g. `typeMismatch`.
        public var description: String { base.rawValue }
    }

    /// What kind of error.
    public let code: Code
    /// The key path (or file, for persistence errors) the error is about, when there is one.
    public let keyPath: String?
    /// What was wrong, in words.
    public let message: String

    /// Creates an error.
    /// - Parameters:
    ///   - code: what kind of error.
    ///   - keyPath: the key path it is about, if any.
    ///   - message: what was wrong.
    public init(_ code: Code, keyPath: String? = nil, _ message: String) {
        self.code = code
        self.keyPath = keyPath
        self.message = message
    }

    /// `keyPath: message`, or the message alone.
    public var description: String {
        guard let keyPath else { return message }
        return "\(keyPath): \(message)"
    }
}
