import Foundation
import TouchpointCore

/// The collector's counters, served at `/metrics` in Prometheus text format.
///
/// Requests by route and status, events accepted, rejected and deduplicated, and how long
/// storage writes and requests take. Cheap to update from every request (one small lock).
public final class CollectorMetrics: Sendable {
    private struct RequestKey: Hashable {
        var route: String
        var status: Int
    }

    private struct State {
        var requests: [RequestKey: Int] = [:]
        var requestLatency: [String: LatencyHistogram] = [:]
        var accepted = 0
        var rejected = 0
        var deduplicated = 0
        var storageWrites = LatencyHistogram()
        var storageErrors = 0
        var connectionsTimedOut = 0
        var connectionsRefused = 0
    }

    private let state = Locked(State())

    /// Creates empty metrics.
    public init() {}

    /// Counts one finished request.
    public func recordRequest(route: String, status: Int, seconds: Double) {
        state.withLock { state in
            state.requests[RequestKey(route: route, status: status), default: 0] += 1
            state.requestLatency[route, default: LatencyHistogram()].record(seconds)
        }
    }

    /// Counts the outcome of one ingest request.
    public func recordIngest(accepted: Int, rejected: Int, deduplicated: Int) {
        state.withLock { state in
            state.accepted += accepted
            state.rejected += rejected
            state.deduplicated += deduplicated
        }
    }

    /// Records how long one storage write took.
    public func recordStorageWrite(seconds: Double, failed: Bool) {
        state.withLock { state in
            state.storageWrites.record(seconds)
            if failed { state.storageErrors += 1 }
        }
    }

    /// Counts a connection closed because a request head, body or idle wait took too long.
    public func recordConnectionTimedOut() { state.withLock { $0.connectionsTimedOut += 1 } }

    /// Counts a connection turned away because the connection limit was reached.
    public func recordConnectionRefused() { state.withLock { $0.connectionsRefused += 1 } }

    /// Connections closed for being too slow so far.
    public var connectionsTimedOut: Int { state.withLock { $0.connectionsTimedOut } }
    /// Connections turned away at the connection limit so far.
    public var connectionsRefused: Int { state.withLock { $0.connectionsRefused } }
    /// Events stored so far (not counting duplicates).
    public var eventsAccepted: Int { state.withLock { $0.accepted } }
    /// Events rejected so far.
    public var eventsRejected: Int { state.withLock { $0.rejected } }
    /// Events dropped as duplicates so far.
    public var eventsDeduplicated: Int { state.withLock { $0.deduplicated } }

    /// All metrics in Prometheus text exposition format (version 0.0.4).
    public func prometheusText() -> String {
        let snapshot = state.value
        var text = ""
        text += "# HELP touchpoint_requests_total HTTP requests handled, by route and status.\n"
        text += "# TYPE touchpoint_requests_total counter\n"
        for (key, count) in snapshot.requests.sorted(by: {
            ($0.key.route, $0.key.status) < ($1.key.route, $1.key.status)
        }) {
            text += "touchpoint_requests_total{route=\"\(Self.escape(key.route))\",status=\"\(key.status)\"} \(count)\n"
        }
        text += "# HELP touchpoint_request_duration_seconds Time to answer a request, by route.\n"
        text += "# TYPE touchpoint_request_duration_seconds histogram\n"
        for (route, histogram) in snapshot.requestLatency.sorted(by: { $0.key < $1.key }) {
            histogram.render(
                name: "touchpoint_request_duration_seconds", labels: "route=\"\(Self.escape(route))\"", into: &text)
        }
        for (name, help, value) in [
            ("touchpoint_events_accepted_total", "Events stored.", snapshot.accepted),
            ("touchpoint_events_rejected_total", "Events rejected as invalid.", snapshot.rejected),
            (
                "touchpoint_events_deduplicated_total", "Events dropped because their messageId was stored.",
                snapshot.deduplicated
            ),
            ("touchpoint_storage_errors_total", "Storage writes that failed.", snapshot.storageErrors),
            (
                "touchpoint_connections_timed_out_total",
                "Connections closed because a request head, body or idle wait took too long.",
                snapshot.connectionsTimedOut
            ),
            (
                "touchpoint_connections_refused_total", "Connections turned away at the connection limit.",
                snapshot.connectionsRefused
            ),
        ] {
            text += "# HELP \(name) \(help)\n# TYPE \(name) counter\n\(name) \(value)\n"
        }
        text += "# HELP touchpoint_storage_write_seconds Time to store one request's events.\n"
        text += "# TYPE touchpoint_storage_write_seconds histogram\n"
        snapshot.storageWrites.render(name: "touchpoint_storage_write_seconds", labels: "", into: &text)
        return text
    }

    private static func escape(_ label: String) -> String {
        label.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
