/// A storage failure: what went wrong, with a stable code for metrics and logs.
public struct StorageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable identifier of the kind of failure, usable as a metric label.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String, Sendable, Hashable {
            case unsupported, invalidDatabaseURL, unavailable, corruptRow, migration, invalidCursor, database,
                queryTooSlow
        }

        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The backend cannot do what was asked.
        public static let unsupported = Code(.unsupported)
        /// A `postgres://` URL that cannot be used.
        public static let invalidDatabaseURL = Code(.invalidDatabaseURL)
        /// The database could not be reached.
        public static let unavailable = Code(.unavailable)
        /// A stored row does not have the expected shape.
        public static let corruptRow = Code(.corruptRow)
        /// The schema could not be brought up to date.
        public static let migration = Code(.migration)
        /// A page cursor that this storage did not hand out.
        public static let invalidCursor = Code(.invalidCursor)
        /// The database failed a statement (a full disk, a damaged file, a constraint).
        public static let database = Code(.database)
        /// A query ran past its time limit and was stopped: asked again, it would be stopped again
        /// (the collector answers `422`, not a `503` that invites a retry).
        public static let queryTooSlow = Code(.queryTooSlow)

        public var description: String { value.rawValue }
    }

    /// The kind of failure.
    public let code: Code
    /// What went wrong, for a person.
    public let message: String

    /// Creates an error.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
