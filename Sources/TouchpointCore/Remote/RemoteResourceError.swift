import Foundation

/// Why a ``RemoteResource`` could not refresh, or could not use its cache: a stable code, the
/// resource's URL, and the detail.
///
/// ```
/// invalidBody https://example.com/surveys.json: surveys[1].trigger.event.name: expected a string
/// corruptCache https://example.com/surveys.json: /…/cache/surveys.cache: header is not JSON
/// ```
public struct RemoteResourceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem, stable across releases.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case transport
            case httpStatus
            case invalidBody
            case notModifiedWithoutCache
            case corruptCache
            case cacheWriteFailed
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// No response: see ``RemoteResourceError/transportError``.
        public static let transport = Code(.transport)
        /// The server answered with a status other than 2xx or 304: see ``RemoteResourceError/status``.
        public static let httpStatus = Code(.httpStatus)
        /// The body did not decode or validate; it was not used and not cached.
        public static let invalidBody = Code(.invalidBody)
        /// The server answered `304` though no cached body was offered.
        public static let notModifiedWithoutCache = Code(.notModifiedWithoutCache)
        /// The cache file could not be read or no longer decodes; it was ignored.
        public static let corruptCache = Code(.corruptCache)
        /// A good body could not be written to the cache (the value is still used).
        public static let cacheWriteFailed = Code(.cacheWriteFailed)

        /// The code's name, e.g. `invalidBody`.
        public var description: String { base.rawValue }
    }

    /// The kind of problem.
    public let code: Code
    /// The resource's URL.
    public let url: URL
    /// What was wrong, in words (a JSON path and reason for a body that failed validation).
    public let message: String
    /// The status code, for ``Code/httpStatus``.
    public let status: Int?
    /// The transport's error, for ``Code/transport``.
    public let transportError: TransportError?

    /// Creates an error.
    public init(code: Code, url: URL, message: String, status: Int? = nil, transportError: TransportError? = nil) {
        self.code = code
        self.url = url
        self.message = message
        self.status = status
        self.transportError = transportError
    }

    public var description: String { "\(code) \(url.absoluteString): \(message)" }
}
