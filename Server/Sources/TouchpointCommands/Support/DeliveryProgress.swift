import Foundation
import Touchpoint

/// What `touchpoint send` shows while it delivers: a progress bar redrawn in place on a terminal,
/// one plain line per acknowledged batch (or failure) otherwise.
final class DeliveryProgress: Sendable {
    private struct State {
        var delivered = 0
        var dropped = 0
        var failed = 0
        var lastDraw = Date.distantPast
        var started = Date()
    }

    let isTerminal: Bool
    let totalBytes: Int64
    let destination: String
    private let state = Locked(State())

    init(isTerminal: Bool, totalBytes: Int64, destination: String) {
        self.isTerminal = isTerminal
        self.totalBytes = totalBytes
        self.destination = destination
    }

    func start() {
        let size = ByteCountFormatter.string(fromByteCount: totalBytes, countStyle: .file)
        StandardOutput.line("sending \(size) of pending events to \(destination)")
    }

    /// Reports a new status; `backlog` is asked only when a line or bar is drawn.
    func update(_ status: DeliveryStatus, backlog: () -> DeliveryBacklog) {
        let statistics = status.statistics
        let (changed, failed, shouldDraw) = state.withLock { state -> (Bool, Bool, Bool) in
            let changed = statistics.deliveredEvents != state.delivered || statistics.droppedEvents != state.dropped
            let failed = statistics.failedRequests != state.failed
            state.delivered = statistics.deliveredEvents
            state.dropped = statistics.droppedEvents
            state.failed = statistics.failedRequests
            let now = Date()
            // A terminal redraws at most ten times a second.
            let due =
                isTerminal ? (changed || failed) && now.timeIntervalSince(state.lastDraw) >= 0.1 : changed || failed
            if due { state.lastDraw = now }
            return (changed, failed, due)
        }
        guard shouldDraw else { return }
        let percent = self.percent(remaining: backlog().bytes)
        if isTerminal {
            draw(percent: percent, status)
        } else {
            if changed {
                StandardOutput.line(
                    "delivered \(statistics.deliveredEvents) events (\(percent)%)"
                        + (statistics.droppedEvents > 0 ? ", dropped \(statistics.droppedEvents)" : ""))
            }
            if failed, let next = status.nextAttempt {
                StandardOutput.line(
                    "attempt failed (\(status.consecutiveFailures) in a row); retrying at \(Timestamp.format(next))")
            }
        }
    }

    func finish(_ status: DeliveryStatus, report: DispatchReport) {
        let seconds = state.withLock { Date().timeIntervalSince($0.started) }
        if isTerminal { draw(percent: 100, status) }
        if isTerminal { StandardOutput.line("") }
        var line = "done: \(report.deliveredEvents) events delivered in \(String(format: "%.1f", seconds)) s"
        if report.droppedEvents > 0 { line += ", \(report.droppedEvents) dropped (see the log)" }
        line += " (\(status.statistics.requests) requests)"
        StandardOutput.line(line)
    }

    func fail(_ status: DeliveryStatus) {
        if isTerminal { StandardOutput.line("") }
        StandardOutput.line(
            "stopped: \(status.statistics.deliveredEvents) events delivered; the rest stays pending and is sent by the next run"
        )
    }

    /// Redraws the bar in place: `[#####-----]  50%  1234 events`.
    private func draw(percent: Int, _ status: DeliveryStatus) {
        let width = 30
        let filled = width * percent / 100
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        var line = "\r[\(bar)] \(String(format: "%3d", percent))%  \(status.statistics.deliveredEvents) events"
        if status.statistics.droppedEvents > 0 { line += ", \(status.statistics.droppedEvents) dropped" }
        if let next = status.nextAttempt { line += "  retrying at \(Timestamp.format(next))" }
        FileHandle.standardOutput.write(Data((line + "\u{1B}[K").utf8))
    }

    private func percent(remaining: Int64) -> Int {
        guard totalBytes > 0 else { return 100 }
        let done = Double(max(0, totalBytes - remaining)) / Double(totalBytes)
        return min(100, max(0, Int(done * 100)))
    }
}
