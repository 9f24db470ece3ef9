import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The ``HTTPTransport`` over `URLSession` (Foundation on Apple platforms, FoundationNetworking
/// on Linux).
///
/// - Each request's ``TransportRequest/timeout`` bounds the whole exchange (connect, send, wait,
///   receive), not just the gap between packets.
/// - A redirect is followed only to the same scheme, host and port; any other redirect is
///   returned as the `3xx` response itself, so a request never lands somewhere else silently.
/// - No cookies, no URL cache: ETags and retries are the caller's business.
/// - Cancelling the calling task cancels the request (``TransportError/Code/cancelled``).
/// - One transport serves any number of concurrent requests; share it.
/// - On Linux (FoundationNetworking), a request with a body uses a fresh connection: that
///   library cannot resend a body when a kept-alive connection turns out to be closed, and
///   would wait for the timeout instead. Requests without a body reuse connections.
///
/// ```swift
/// let transport = URLSessionTransport()
/// let response = try await transport.send(TransportRequest(url: url, timeout: 10))
/// ```
public final class URLSessionTransport: HTTPTransport {
    /// Limits that apply to every request of a transport.
    public struct Configuration: Sendable, Hashable {
        /// The largest response body accepted; a larger one fails with
        /// ``TransportError/Code/responseTooLarge`` (32 MiB by default).
        public var maximumResponseBytes: Int
        /// How many connections to one host may be open at once (6 by default).
        public var maximumConnectionsPerHost: Int

        /// Creates a configuration.
        public init(maximumResponseBytes: Int = 32 << 20, maximumConnectionsPerHost: Int = 6) {
            self.maximumResponseBytes = maximumResponseBytes
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
        }
    }

    /// The limits this transport applies.
    public let configuration: Configuration
    private let session: URLSession
    private let delegate: URLSessionTransportDelegate

    /// Creates a transport with its own `URLSession`.
    /// - Parameter configuration: limits for every request.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.httpShouldSetCookies = false
        sessionConfiguration.httpCookieAcceptPolicy = .never
        sessionConfiguration.httpMaximumConnectionsPerHost = max(1, configuration.maximumConnectionsPerHost)
        delegate = URLSessionTransportDelegate(maximumResponseBytes: configuration.maximumResponseBytes)
        session = URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: nil)
    }

    deinit { session.finishTasksAndInvalidate() }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let urlRequest = try Self.makeURLRequest(request)
        let task = session.dataTask(with: urlRequest)
        let exchange = URLSessionTransportDelegate.Exchange(task: task, url: request.url, timeout: request.timeout)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                delegate.start(exchange, continuation: continuation)
            }
        } onCancel: {
            exchange.abort(.cancelled)
        }
    }

    /// The `URLRequest` for `request`, or an ``TransportError/Code/invalidRequest`` error.
    static func makeURLRequest(_ request: TransportRequest) throws(TransportError) -> URLRequest {
        let scheme = request.url.scheme?.lowercased()
        guard scheme == "http" || scheme == "https", let host = request.url.host, !host.isEmpty else {
            throw TransportError(code: .invalidRequest, url: request.url, reason: "not an absolute http or https URL")
        }
        guard request.timeout.isFinite, request.timeout > 0 else {
            throw TransportError(code: .invalidRequest, url: request.url, reason: "timeout must be positive")
        }
        if request.method == .get && !request.body.isEmpty {
            throw TransportError(code: .invalidRequest, url: request.url, reason: "a GET request cannot carry a body")
        }
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        // The transport's own deadline is exact; URLSession's (whole seconds on Linux) is a backstop.
        urlRequest.timeoutInterval = request.timeout.rounded(.up) + 1
        for field in request.headers {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
        }
        if !request.body.isEmpty {
            urlRequest.httpBody = Data(request.body)
            #if canImport(FoundationNetworking)
            // FoundationNetworking resends a request whose kept-alive connection turned out to
            // be closed, but cannot rewind its body: the resent request waits for a body that
            // never comes until the timeout. A fresh connection per request with a body avoids it.
            if !request.headers.contains("Connection") {
                urlRequest.setValue("close", forHTTPHeaderField: "Connection")
            }
            #endif
        }
        return urlRequest
    }
}
