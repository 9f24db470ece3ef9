import Foundation

/// Why an HTTP exchange produced no complete response, and for which URL.
///
/// The ``code`` is stable (use it in metrics and in `switch`-like comparisons); ``reason`` is
/// the detail the system gave. A status code such as `503` is never an `TransportError`: it is a
/// response.
///
/// ```
/// timeout http://127.0.0.1:8080/v1/batch: no complete response within 2.0 s
/// ```
public struct TransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure, stable across releases.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case timeout
            case connectionFailed
            case connectionReset
            case cancelled
            case invalidResponse
            case invalidRequest
            case responseTooLarge
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// No complete response arrived within the request's timeout.
        public static let timeout = Code(.timeout)
        /// No connection could be made: refused, no route, the host not found, TLS failed.
        public static let connectionFailed = Code(.connectionFailed)
        /// The connection broke before the response was complete (reset, closed mid-response).
        public static let connectionReset = Code(.connectionReset)
        /// The calling task was cancelled.
        public static let cancelled = Code(.cancelled)
        /// What came back was not a valid HTTP response.
        public static let invalidResponse = Code(.invalidResponse)
        /// The request could not be sent as given (not an `http`/`https` URL, for instance).
        public static let invalidRequest = Code(.invalidRequest)
        /// The response body was larger than the transport accepts.
        public static let responseTooLarge = Code(.responseTooLarge)

        /// The code's name, e.g. `connectionReset`: short and fixed, usable as a metric label.
        public var description: String { base.rawValue }
    }

    /// The kind of failure.
    public let code: Code
    /// The URL of the request that failed.
    public let url: URL
    /// What happened, in words, with the system's error code when there was one.
    public let reason: String

    /// Creates an error.
    public init(code: Code, url: URL, reason: String) {
        self.code = code
        self.url = url
        self.reason = reason
    }

    /// Whether sending the same request again later may succeed: timeouts, connection failures
    /// and resets, and invalid responses are transient; cancellation and invalid requests are not.
    public var isTransient: Bool {
        code != .cancelled && code != .invalidRequest && code != .responseTooLarge
    }

    /// The code's name, fixed for each kind of failure.
    public var shortDescription: String { code.description }

    public var description: String { "\(code) \(url.absoluteString): \(reason)" }
}
