import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The session delegate behind ``URLSessionTransport``: collects each task's body, refuses
/// cross-origin redirects, enforces the size limit and turns completions into results.
final class URLSessionTransportDelegate: NSObject, URLSessionDataDelegate, Sendable {
    /// Why the transport itself stopped a task.
    enum AbortReason: Sendable {
        case cancelled
        case timeout
        case tooLarge
    }

    /// One request in flight: its task, the continuation to resume, the body so far.
    final class Exchange: Sendable {
        struct State {
            var continuation: CheckedContinuation<TransportResponse, any Error>?
            var body: [UInt8] = []
            var abortReason: AbortReason?
            var isRunning = false
        }

        let task: URLSessionDataTask
        let url: URL
        let timeout: TimeInterval
        let state = Locked(State())

        init(task: URLSessionDataTask, url: URL, timeout: TimeInterval) {
            self.task = task
            self.url = url
            self.timeout = timeout
        }

        /// Stops the exchange for `reason`; the first reason wins. Safe before, during or after the task.
        func abort(_ reason: AbortReason) {
            let action: (running: Bool, continuation: CheckedContinuation<TransportResponse, any Error>?) =
                state.withLock { state in
                    guard state.abortReason == nil else { return (false, nil) }
                    state.abortReason = reason
                    if state.isRunning { return (true, nil) }
                    // Not started yet: answer now; `start` will see the reason and never resume the task.
                    defer { state.continuation = nil }
                    return (false, state.continuation)
                }
            if action.running { task.cancel() }
            action.continuation?.resume(throwing: error(for: reason))
        }

        func error(for reason: AbortReason) -> TransportError {
            switch reason {
            case .cancelled:
                return TransportError(code: .cancelled, url: url, reason: "the request was cancelled")
            case .timeout:
                return TransportError(code: .timeout, url: url, reason: "no complete response within \(timeout) s")
            case .tooLarge:
                return TransportError(code: .responseTooLarge, url: url, reason: "the response body exceeded the limit")
            }
        }
    }

    private let maximumResponseBytes: Int
    private let exchanges = Locked([Int: Exchange]())

    init(maximumResponseBytes: Int) {
        self.maximumResponseBytes = maximumResponseBytes
    }

    /// Registers `exchange` and starts its task, unless it was cancelled before it began.
    func start(_ exchange: Exchange, continuation: CheckedContinuation<TransportResponse, any Error>) {
        exchanges.withLock { $0[exchange.task.taskIdentifier] = exchange }
        let reason: AbortReason? = exchange.state.withLock { state in
            if let reason = state.abortReason { return reason }
            state.continuation = continuation
            state.isRunning = true
            exchange.task.resume()
            return nil
        }
        if let reason {
            exchanges.withLock { _ = $0.removeValue(forKey: exchange.task.taskIdentifier) }
            continuation.resume(throwing: exchange.error(for: reason))
            return
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + exchange.timeout) { [weak exchange] in
            exchange?.abort(.timeout)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let exchange = exchanges.withLock({ $0[dataTask.taskIdentifier] }) else { return }
        let tooLarge = exchange.state.withLock { state in
            state.body.append(contentsOf: data)
            return state.body.count > maximumResponseBytes
        }
        if tooLarge { exchange.abort(.tooLarge) }
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let original = task.originalRequest?.url
        let target = request.url
        let sameOrigin =
            original?.scheme?.lowercased() == target?.scheme?.lowercased()
            && original?.host?.lowercased() == target?.host?.lowercased()
            && original?.port == target?.port
        completionHandler(sameOrigin ? request : nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let exchange = exchanges.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        let (continuation, body, reason) = exchange.state.withLock { state in
            defer {
                state.continuation = nil
                state.body = []
            }
            return (state.continuation, state.body, state.abortReason)
        }
        guard let continuation else { return }
        if let reason {
            continuation.resume(throwing: exchange.error(for: reason))
        } else if let error {
            continuation.resume(throwing: Self.httpError(error, url: exchange.url, afterResponse: task.response != nil))
        } else if let response = task.response as? HTTPURLResponse {
            var headers = TransportHeaders()
            for (name, value) in response.allHeaderFields {
                headers.add(name: "\(name)", value: "\(value)")
            }
            continuation.resume(
                returning: TransportResponse(
                    status: response.statusCode,
                    headers: headers,
                    body: body,
                    url: response.url ?? exchange.url
                )
            )
        } else {
            continuation.resume(
                throwing: TransportError(code: .invalidResponse, url: exchange.url, reason: "no HTTP response")
            )
        }
    }

    /// Maps a URLSession failure onto a stable ``TransportError`` code.
    ///
    /// FoundationNetworking reports some failures without a specific code (a body cut short is
    /// `URLError.unknown` there); such a failure after the response head arrived is a broken
    /// connection, before it a failed one.
    static func httpError(_ error: any Error, url: URL, afterResponse: Bool) -> TransportError {
        let unspecific: TransportError.Code = afterResponse ? .connectionReset : .connectionFailed
        guard let urlError = error as? URLError else {
            return TransportError(code: unspecific, url: url, reason: "\(error)")
        }
        let code: TransportError.Code
        switch urlError.code {
        case .timedOut:
            code = .timeout
        case .cancelled:
            code = .cancelled
        case .networkConnectionLost:
            code = .connectionReset
        case .badServerResponse, .cannotParseResponse, .cannotDecodeRawData, .cannotDecodeContentData,
            .zeroByteResource, .httpTooManyRedirects, .redirectToNonExistentLocation:
            code = .invalidResponse
        case .badURL, .unsupportedURL, .dataLengthExceedsMaximum:
            code = .invalidRequest
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet,
            .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected,
            .clientCertificateRequired, .internationalRoamingOff, .dataNotAllowed, .callIsActive:
            code = .connectionFailed
        default:
            code = unspecific
        }
        return TransportError(
            code: code, url: url, reason: "\(urlError.localizedDescription) (URLError \(urlError.code.rawValue))")
    }
}
