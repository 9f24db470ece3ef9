import Foundation
import TouchpointCore

/// An HTTP server that injects faults from a ``FaultPlan``: in front of a real upstream as a
/// reverse proxy, or standalone with its own handler.
///
/// It answers `500`, `503`, `429` with `Retry-After`, `413`, resets connections, cuts
/// responses short, stalls past the client's timeout and goes down for a while (then listens
/// again on the same port), and counts what it forwarded and what it injected, so a test can
/// check both that every event arrived exactly once and that the client did not hammer it.
///
/// ```swift
/// let proxy = try FaultInjectingServer(
///     plan: FaultPlan(seed: 7, rates: [.serviceUnavailable(retryAfter: "1"): 0.2, .reset: 0.1]),
///     upstream: collector.baseURL
/// )
/// defer { proxy.stop() }
/// // point the client at proxy.baseURL … then:
/// #expect(proxy.statistics.forwarded >= batches)
/// ```
public final class FaultInjectingServer: Sendable {
    private struct State {
        var plan: FaultPlan
        var statistics = FaultStatistics()
        var records: [FaultRecord] = []
        var isStopped = false
    }

    /// The listening server: its URL, port and log of every request received.
    public let server: TestHTTPServer
    private let state: Locked<State>

    /// Starts a reverse proxy to `upstream`.
    /// - Parameters:
    ///   - plan: which requests to answer badly.
    ///   - upstream: the real server's base URL; a request's target is appended to it.
    ///   - transport: how requests are forwarded.
    ///   - upstreamTimeout: seconds a forwarded request may take (then `502`).
    ///   - options: the listening server's limits and timeouts.
    /// - Throws: when the socket cannot be bound.
    public convenience init(
        plan: FaultPlan,
        upstream: URL,
        transport: any HTTPTransport = URLSessionTransport(),
        upstreamTimeout: Double = 30,
        options: TestHTTPServer.Options = TestHTTPServer.Options()
    ) throws {
        let base =
            upstream.absoluteString.hasSuffix("/")
            ? String(upstream.absoluteString.dropLast()) : upstream.absoluteString
        try self.init(plan: plan, options: options) { request in
            await Self.forward(request, to: base, transport: transport, timeout: upstreamTimeout)
        }
    }

    /// Starts a standalone fault-injecting server whose normal answers come from `handler`.
    /// - Parameters:
    ///   - plan: which requests to answer badly.
    ///   - options: the listening server's limits and timeouts.
    ///   - handler: the normal answer to a request that gets no fault.
    /// - Throws: when the socket cannot be bound.
    public init(
        plan: FaultPlan,
        options: TestHTTPServer.Options = TestHTTPServer.Options(),
        handler: @escaping TestHTTPServer.Handler
    ) throws {
        let state = Locked(State(plan: plan))
        self.state = state
        server = try TestHTTPServer(options: options)
        server.setHandler { [weak server] request in
            guard let server else { return .fault(.reset) }
            return await Self.handle(request, state: state, server: server, handler: handler)
        }
    }

    deinit { stop() }

    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL { server.baseURL }

    /// The URL of `path` on this server.
    public func url(_ path: String) -> URL { server.url(path) }

    /// What was forwarded and injected so far.
    public var statistics: FaultStatistics { state.withLock { $0.statistics } }

    /// Every decision, in decision order.
    public var records: [FaultRecord] { state.withLock { $0.records } }

    /// Replaces the plan (for instance with ``FaultPlan/none`` to let a client recover).
    public func setPlan(_ plan: FaultPlan) { state.withLock { $0.plan = plan } }

    /// Stops listening for good (a pending restart after ``FaultPlan/Fault/down(seconds:)`` is cancelled).
    public func stop() {
        state.withLock { $0.isStopped = true }
        server.stop()
    }

    private static func handle(
        _ request: TestHTTPRequest,
        state: Locked<State>,
        server: TestHTTPServer,
        handler: TestHTTPServer.Handler
    ) async -> TestHTTPResponse {
        let (fault, index) = state.withLock { state in
            let index = state.plan.decisions
            let fault = state.plan.nextFault(bodySize: request.body.count)
            state.statistics.received += 1
            if let fault { state.statistics.injected[fault, default: 0] += 1 }
            if fault == nil || fault?.isForwarded == true { state.statistics.forwarded += 1 }
            state.records.append(
                FaultRecord(
                    sequence: index,
                    method: request.method,
                    target: request.target,
                    bodySize: request.body.count,
                    fault: fault
                )
            )
            return (fault, index)
        }
        switch fault {
        case .status(let status, let retryAfter)?:
            var headers: TransportHeaders = [:]
            if let retryAfter { headers["Retry-After"] = retryAfter }
            return .json(["error": .string("injected \(status)")], status: status, headers: headers)
        case .reset?:
            return .fault(.reset)
        case .stall(let seconds)?:
            return .fault(.stall(seconds: seconds))
        case .down(let seconds)?:
            server.stop()
            Task.detached {
                try? await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1_000_000_000))
                state.withLock { state in
                    if !state.isStopped { try? server.restart() }
                }
            }
            return .fault(.reset)
        case .closeMidResponse?, nil:
            var response = await handler(request)
            let upstreamFailed = response.headers[upstreamErrorHeader] != nil
            state.withLock { state in
                if let position = state.records.lastIndex(where: { $0.sequence == index }) {
                    state.records[position].upstreamStatus = upstreamFailed ? nil : response.status
                }
                if upstreamFailed { state.statistics.upstreamFailures += 1 }
            }
            if fault == .closeMidResponse { response.fault = .closeMidResponse }
            return response
        }
    }

    /// Marks a `502` the proxy made up because the upstream gave no response.
    private static let upstreamErrorHeader = "X-Fault-Upstream-Error"

    /// Header fields that belong to one connection and are not passed through.
    private static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade",
        "host", "content-length", "expect",
    ]

    private static func forward(
        _ request: TestHTTPRequest,
        to base: String,
        transport: any HTTPTransport,
        timeout: Double
    ) async -> TestHTTPResponse {
        guard let url = URL(string: base + request.target) else {
            return .text("bad request target \(request.target)\n", status: 400)
        }
        var headers = TransportHeaders()
        for field in request.headers where !hopByHop.contains(field.name.lowercased()) {
            headers.add(name: field.name, value: field.value)
        }
        do {
            let response = try await transport.send(
                TransportRequest(
                    method: request.method, url: url, headers: headers, body: request.body, timeout: timeout)
            )
            var responseHeaders = TransportHeaders()
            for field in response.headers
            where !hopByHop.contains(field.name.lowercased()) && field.name.lowercased() != "content-encoding" {
                responseHeaders.add(name: field.name, value: field.value)
            }
            return TestHTTPResponse(status: response.status, headers: responseHeaders, body: response.body)
        } catch {
            return .text("upstream failed: \(error)\n", status: 502, headers: [upstreamErrorHeader: "1"])
        }
    }
}
