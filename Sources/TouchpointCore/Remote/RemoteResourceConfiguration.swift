import Foundation

/// How a ``RemoteResource`` fetches, caches and cools down.
public struct RemoteResourceConfiguration: Sendable, Hashable {
    /// Seconds a value stays fresh after the server last confirmed it; within it ``RemoteResource/refresh()``
    /// makes no request (5 minutes by default).
    public var cacheTTL: TimeInterval
    /// The timeout of each request, in seconds (30 by default).
    public var requestTimeout: TimeInterval
    /// How failures cool down: after each consecutive failure no request is made (except by
    /// ``RemoteResource/forceRefresh()``) until the backoff's delay has passed.
    public var backoff: Backoff.Policy
    /// Extra header fields for every request (an `Authorization`, say).
    public var headers: TransportHeaders
    /// A seed for the backoff's jitter, for reproducible tests; nil draws from the system.
    public var jitterSeed: UInt64?
    /// While closed, no request is sent: refreshes serve what is held and auto-refresh waits
    /// (the user opted out). Nil: always open.
    public var gate: RequestGate?

    /// Creates a configuration.
    /// - Parameters:
    ///   - cacheTTL: seconds a confirmed value stays fresh (300 by default).
    ///   - requestTimeout: seconds per request (30 by default).
    ///   - backoff: the cool-down after failures (from 5 s, doubling, up to 15 minutes, at least 1 s).
    ///   - headers: extra header fields.
    ///   - jitterSeed: a seed for reproducible jitter.
    ///   - gate: stops requests while closed; nil for none.
    public init(
        cacheTTL: TimeInterval = 300,
        requestTimeout: TimeInterval = 30,
        backoff: Backoff.Policy = Backoff.Policy(initialDelay: 5, maximumDelay: 900, minimumDelay: 1),
        headers: TransportHeaders = [:],
        jitterSeed: UInt64? = nil,
        gate: RequestGate? = nil
    ) {
        self.cacheTTL = cacheTTL
        self.requestTimeout = requestTimeout
        self.backoff = backoff
        self.headers = headers
        self.jitterSeed = jitterSeed
        self.gate = gate
    }
}
