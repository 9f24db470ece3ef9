import Foundation
import TouchpointCore

/// A real HTTP/1.1 server on 127.0.0.1 for tests: an ephemeral port, keep-alive,
/// `Content-Length` and chunked request bodies, scripted or computed answers, a log of every
/// request, and `stop()`/`restart()` on the same port.
///
/// Written over POSIX sockets with one thread per connection, so it needs no event-loop
/// library. Every read and write has a timeout (``Options/ioTimeout``) and every handler call a
/// deadline (``Options/handlerTimeout``), so a test using it cannot hang on it. The server stops
/// when ``stop()`` is called or when it is released.
///
/// ```swift
/// let server = try TestHTTPServer { request in
///     request.path == "/config" ? .json(["surveys": []]) : TestHTTPResponse(status: 404)
/// }
/// defer { server.stop() }
/// server.enqueue(TestHTTPResponse(status: 503))  // the first request gets a 503
/// let response = try await URLSessionTransport().send(TransportRequest(url: server.url("/config")))
/// ```
public final class TestHTTPServer: Sendable {
    /// Computes the answer to a request that no scripted response is waiting for.
    public typealias Handler = @Sendable (TestHTTPRequest) async -> TestHTTPResponse

    /// Limits and timeouts.
    public struct Options: Sendable, Hashable {
        /// Seconds a read or write on a connection may block (also the keep-alive idle time).
        public var ioTimeout: Double
        /// Seconds the handler may take before the server answers `500` on its behalf.
        public var handlerTimeout: Double
        /// The largest request head accepted (`431` beyond).
        public var maximumHeadBytes: Int
        /// The largest request body accepted (`413` beyond).
        public var maximumBodyBytes: Int

        /// Creates options.
        public init(
            ioTimeout: Double = 5,
            handlerTimeout: Double = 30,
            maximumHeadBytes: Int = 64 * 1024,
            maximumBodyBytes: Int = 64 << 20
        ) {
            self.ioTimeout = ioTimeout
            self.handlerTimeout = handlerTimeout
            self.maximumHeadBytes = maximumHeadBytes
            self.maximumBodyBytes = maximumBodyBytes
        }
    }

    private let engine: TestHTTPServerEngine

    /// The port the server listens on; it keeps it across ``restart()``.
    public var port: UInt16 { engine.port }

    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Starts a server.
    /// - Parameters:
    ///   - port: the port to listen on; 0 (the default) picks a free ephemeral port.
    ///   - options: limits and timeouts.
    ///   - handler: answers requests when no scripted response is queued (404 by default).
    /// - Throws: when the socket cannot be bound.
    public init(
        port: UInt16 = 0,
        options: Options = Options(),
        handler: @escaping Handler = { _ in TestHTTPResponse(status: 404) }
    ) throws {
        engine = try TestHTTPServerEngine(port: port, options: options, handler: handler)
    }

    deinit { engine.stop() }

    /// The URL of `path` on this server, e.g. `url("/v1/batch")`.
    public func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)" + (path.hasPrefix("/") ? path : "/" + path))!
    }

    /// Replaces the handler.
    public func setHandler(_ handler: @escaping Handler) { engine.state.withLock { $0.handler = handler } }

    /// Queues responses to give, in order, to the next requests (before the handler is asked).
    public func enqueue(_ responses: TestHTTPResponse...) { enqueue(contentsOf: responses) }

    /// Queues responses to give, in order, to the next requests (before the handler is asked).
    public func enqueue(contentsOf responses: [TestHTTPResponse]) {
        engine.state.withLock { $0.scripted.append(contentsOf: responses) }
    }

    /// Every request received so far, in arrival order.
    public var requests: [TestHTTPRequest] { engine.state.withLock { $0.log } }

    /// How many requests have been received.
    public var requestCount: Int { engine.state.withLock { $0.log.count } }

    /// How many connections have been accepted.
    public var connectionCount: Int { engine.state.withLock { $0.connectionCounter } }

    /// Forgets the request log (the sequence numbering goes on).
    public func clearLog() { engine.state.withLock { $0.log.removeAll() } }

    /// Whether the server is accepting connections.
    public var isRunning: Bool { engine.state.withLock { $0.isRunning } }

    /// Waits until at least `count` requests have been received, or `timeout` seconds pass.
    /// - Returns: whether the count was reached.
    public func waitForRequests(_ count: Int, timeout: Double = 5) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while requestCount < count {
            if Date() >= deadline { return false }
            try? await Task.sleep(nanoseconds: 2_000_000)
        }
        return true
    }

    /// Stops listening (new connections are refused from now on) and ends every open
    /// connection. Requests whose handler is still running are answered into a closed socket.
    /// The port stays held until ``restart()`` or the server's end, so no other server (of a test
    /// running alongside) is given it and mistaken for this one.
    public func stop() { engine.stop() }

    /// Listens again on the same port after ``stop()``; does nothing when running.
    /// - Throws: when the port cannot be bound again.
    public func restart() throws { try engine.start() }
}
