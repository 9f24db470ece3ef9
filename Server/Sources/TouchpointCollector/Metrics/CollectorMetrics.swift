import CoreMetrics
import Foundation
import Prometheus
import TouchpointCore

/// The collector's metrics, through swift-metrics into a Prometheus registry of the collector's
/// own, served at `/metrics` in Prometheus text format by swift-prometheus.
///
/// Requests by route and status, events accepted, rejected and deduplicated, how long storage
/// writes and requests take, and connections closed for slowness or turned away. Each collector
/// has its own registry (several run in one test process), so nothing is bootstrapped globally;
/// the metric objects are made once and kept, so counting a request is a dictionary lookup and
/// an atomic add.
public final class CollectorMetrics: Sendable {
    private struct RequestKey: Hashable {
        var route: String
        var status: Int
    }

    /// Bucket bounds of both duration histograms, in seconds (as before swift-metrics).
    static let bounds: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

    private let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let accepted: CoreMetrics.Counter
    private let rejected: CoreMetrics.Counter
    private let deduplicated: CoreMetrics.Counter
    private let storageErrors: CoreMetrics.Counter
    private let timedOut: CoreMetrics.Counter
    private let refused: CoreMetrics.Counter
    private let storageWrites: CoreMetrics.Timer
    private let requests = Locked([RequestKey: (count: CoreMetrics.Counter, latency: CoreMetrics.Timer)]())
    /// The counts the collector reads back itself (tests, loadgen), kept beside the registry.
    private let totals = Locked((accepted: 0, rejected: 0, deduplicated: 0, timedOut: 0, refused: 0))

    /// Creates empty metrics.
    public init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        let buckets = Self.bounds.map { Duration.nanoseconds(Int64(($0 * 1e9).rounded())) }
        factory.durationHistogramBuckets = [
            "touchpoint_request_duration_seconds": buckets, "touchpoint_storage_write_seconds": buckets,
        ]
        self.factory = factory
        accepted = CoreMetrics.Counter(label: "touchpoint_events_accepted_total", factory: factory)
        rejected = CoreMetrics.Counter(label: "touchpoint_events_rejected_total", factory: factory)
        deduplicated = CoreMetrics.Counter(label: "touchpoint_events_deduplicated_total", factory: factory)
        storageErrors = CoreMetrics.Counter(label: "touchpoint_storage_errors_total", factory: factory)
        timedOut = CoreMetrics.Counter(label: "touchpoint_connections_timed_out_total", factory: factory)
        refused = CoreMetrics.Counter(label: "touchpoint_connections_refused_total", factory: factory)
        storageWrites = CoreMetrics.Timer(label: "touchpoint_storage_write_seconds", factory: factory)
    }

    /// Counts one finished request.
    public func recordRequest(route: String, status: Int, seconds: Double) {
        let key = RequestKey(route: route, status: status)
        let metrics = requests.withLock { requests in
            if let metrics = requests[key] { return metrics }
            let made = (
                count: CoreMetrics.Counter(
                    label: "touchpoint_requests_total", dimensions: [("route", route), ("status", "\(status)")],
                    factory: factory),
                latency: CoreMetrics.Timer(
                    label: "touchpoint_request_duration_seconds", dimensions: [("route", route)], factory: factory)
            )
            requests[key] = made
            return made
        }
        metrics.count.increment()
        metrics.latency.recordSeconds(seconds)
    }

    /// Counts the events of one ingest request.
    public func recordIngest(accepted: Int, rejected: Int, deduplicated: Int) {
        self.accepted.increment(by: accepted)
        self.rejected.increment(by: rejected)
        self.deduplicated.increment(by: deduplicated)
        totals.withLock {
            $0.accepted += accepted
            $0.rejected += rejected
            $0.deduplicated += deduplicated
        }
    }

    /// Times one storage write.
    public func recordStorageWrite(seconds: Double, failed: Bool) {
        storageWrites.recordSeconds(seconds)
        if failed { storageErrors.increment() }
    }

    /// Counts a connection closed because a request head, body or idle wait took too long.
    public func recordConnectionTimedOut() {
        timedOut.increment()
        totals.withLock { $0.timedOut += 1 }
    }

    /// Counts a connection turned away because the connection limit was reached.
    public func recordConnectionRefused() {
        refused.increment()
        totals.withLock { $0.refused += 1 }
    }

    /// Connections closed for being too slow so far.
    public var connectionsTimedOut: Int { totals.withLock { $0.timedOut } }
    /// Connections turned away at the connection limit so far.
    public var connectionsRefused: Int { totals.withLock { $0.refused } }
    /// Events stored so far (not counting duplicates).
    public var eventsAccepted: Int { totals.withLock { $0.accepted } }
    /// Events rejected so far.
    public var eventsRejected: Int { totals.withLock { $0.rejected } }
    /// Events dropped as duplicates so far.
    public var eventsDeduplicated: Int { totals.withLock { $0.deduplicated } }

    /// All metrics in Prometheus text exposition format (version 0.0.4).
    public func prometheusText() -> String {
        registry.emitToString()
    }
}
