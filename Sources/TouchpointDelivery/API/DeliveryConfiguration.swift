import Foundation
import Logging
import TouchpointCore

/// How an ``EventDispatcher`` batches, compresses, retries and paces its uploads.
///
/// ```swift
/// var configuration = DeliveryConfiguration()
/// configuration.dispatchInterval = 120          // every two minutes
/// configuration.maximumRequestsPerMinute = 30
/// configuration.batchLimits = BatchLimits(maximumEvents: 500)
/// ```
public struct DeliveryConfiguration: Sendable {
    /// When pending events are sent, with the seed's meaning: `< 0` only on
    /// ``EventDispatcher/dispatch(timeout:failFast:)``; `0` (the default) as soon as they are
    /// recorded (events recorded while a request is in flight go together in the next one);
    /// `> 0` every that many seconds.
    public var dispatchInterval: TimeInterval = 0
    /// The size of one request: Segment's limits (500,000 bytes, 2,500 events, 32 KB per event) unless set lower.
    public var batchLimits: BatchLimits = .segment
    /// Request bodies of at least this many bytes are sent gzipped (`Content-Encoding: gzip`)
    /// when that makes them smaller; nil never compresses. 1 KB by default.
    public var gzipThreshold: Int? = 1024
    /// How hard to compress.
    public var gzipLevel: Gzip.Level = .fastest
    /// The most time one request may take, in seconds, before it counts as failed (30 by default).
    public var requestTimeout: TimeInterval = 30
    /// How retries back off: exponential with full jitter from 1 s, capped at 5 minutes, never
    /// sooner than 0.5 s after a failure. Persisted across launches.
    public var backoff = Backoff.Policy(initialDelay: 1, multiplier: 2, maximumDelay: 300, minimumDelay: 0.5)
    /// The ceiling on requests per minute, retries included (600 by default); nil for none.
    public var maximumRequestsPerMinute: Double? = 600
    /// How many requests may go back to back under the ceiling before pacing starts (10 by default).
    public var requestBurst = 10
    /// Whether to log what is sent, when, and why delivery waits (see ``EventDispatcher``).
    public var isDebugMode = false
    /// The library named in each message's `context.library`.
    public var library: DeliveryLibrary = .touchpoint
    /// Segment's standard context (`app`, `device`, `os`, `locale`, `timezone`) sent with every
    /// message: this process's (``DeliveryContext/current``, read once when the dispatcher starts)
    /// by default; nil sends only `sessionId` and `library`.
    public var context: DeliveryContext? = .current
    /// Connectivity news. By default the system's network path on Apple platforms
    /// (``NWPathReachabilityMonitor``), none elsewhere (delivery is then failure-driven).
    public var reachability: (any ReachabilityMonitor)? = DeliveryConfiguration.platformReachability
    /// The source of time for timers, backoff, rate limiting and `sentAt`.
    public var clock: any WallClock = SystemClock()
    /// Fixes the backoff's jitter, for reproducible tests; random when nil.
    public var jitterSeed: UInt64?
    /// Where delivery logs (swift-log, label `touchpoint.delivery`).
    public var logger: Logger = .touchpoint("delivery")

    /// Creates the default configuration.
    public init() {}

    /// The platform's reachability monitor, if it has one.
    public static var platformReachability: (any ReachabilityMonitor)? {
        #if canImport(Network)
        return NWPathReachabilityMonitor()
        #else
        return nil
        #endif
    }
}
