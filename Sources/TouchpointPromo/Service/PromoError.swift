import TouchpointCore

/// Why a ``PromoService`` has no fresh catalog: a stable code and the detail.
///
/// ```
/// unreachable: transport http://…/apps.json: connection refused
/// invalidCatalog: invalidBody https://…/apps.json: apps: expected an array, got object
/// ```
public struct PromoError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem, stable across releases.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case notConfigured
            case unreachable
            case invalidCatalog
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// No catalog URL: ``PromoConfig/defaultCatalogURL`` was not set, or the URL is not http(s).
        public static let notConfigured = Code(.notConfigured)
        /// The catalog could not be fetched (no connection, a timeout, a non-2xx status).
        public static let unreachable = Code(.unreachable)
        /// The server answered with something that is not a usable catalog.
        public static let invalidCatalog = Code(.invalidCatalog)

        /// The code's name, e.g. `unreachable`.
        public var description: String { base.rawValue }
    }

    /// The kind of problem.
    public let code: Code
    /// What went wrong, in words.
    public let message: String
    /// The remote resource's error behind it, if any.
    public let underlying: RemoteResourceError?

    /// Creates an error.
    public init(code: Code, message: String, underlying: RemoteResourceError? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// The error for a failed refresh of the catalog resource.
    init(_ error: RemoteResourceError) {
        let code: Code = error.code == .invalidBody ? .invalidCatalog : .unreachable
        self.init(code: code, message: error.description, underlying: error)
    }

    public var description: String { "\(code): \(message)" }
}
