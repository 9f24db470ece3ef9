import Foundation
import Logging

extension EventRecorder {
    /// Deletes the sessions that ``EventRecorderConfiguration/retention`` no longer keeps,
    /// oldest first. The open session, and sessions a consumer still needs, are kept.
    ///
    /// The recorder runs this by itself in the background a few seconds after the first session of
    /// a run starts; call it to apply the policy now.
    @discardableResult
    public func applyRetention() async -> RetentionReport {
        retentionPass()
    }

    func scheduleRetentionLocked(_ state: inout State) {
        let policy = configuration.retention
        guard !state.retentionScheduled, policy.maximumAge != nil || policy.maximumTotalBytes != nil else { return }
        state.retentionScheduled = true
        syncQueue.asyncAfter(deadline: .now() + 10) { [weak self] in
            _ = self?.retentionPass()
        }
    }

    func retentionPass() -> RetentionReport {
        var report = RetentionReport()
        let policy = configuration.retention
        let (openSession, consumers) = state.withLock { ($0.session?.session.id, $0.consumers) }
        let now = configuration.clock.now()

        var stored: [(entry: SessionJournal.Entry, bytes: Int64)] = []
        var seen = Set<UUID>()
        do {
            try journal.entries { entry in
                let path = layout.path(entry.directory)
                guard seen.insert(entry.sessionId).inserted, FileManager.default.fileExists(atPath: path) else {
                    return true
                }
                stored.append((entry, Self.size(ofFolder: path)))
                return true
            }
        } catch {
            logger.error("retention cannot read the session journal: \(error)")
            return report
        }
        var total = stored.reduce(Int64(0)) { $0 + $1.bytes }
        for (entry, bytes) in stored where entry.sessionId != openSession {
            let tooOld = policy.maximumAge.map { now.timeIntervalSince(entry.startedAt) > $0 } ?? false
            let tooBig = policy.maximumTotalBytes.map { total > $0 } ?? false
            guard tooOld || tooBig else { continue }
            guard consumers.allSatisfy({ $0.eventRecorder(self, mayDelete: entry) }) else {
                report.keptForConsumers.append(entry.sessionId)
                continue
            }
            do {
                try FileManager.default.removeItem(atPath: layout.path(entry.directory))
                total -= bytes
                report.deletedSessions.append(entry.sessionId)
                report.deletedBytes += bytes
            } catch {
                logger.error("retention cannot delete \(entry.directory): \(error)")
            }
        }
        report.remainingBytes = total
        if !report.deletedSessions.isEmpty {
            logger.info(
                "retention deleted \(report.deletedSessions.count) sessions (\(report.deletedBytes) bytes); \(total) bytes remain"
            )
        }
        return report
    }

    private static func size(ofFolder path: String) -> Int64 {
        var total: Int64 = 0
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
            // The events up to their committed end: an open log's allocated space is not history.
            if name == "events.jsonl", let length = MappedLogFile.recordsLength(ofFileAt: path + "/" + name) {
                total += length
                continue
            }
            let attributes = try? FileManager.default.attributesOfItem(atPath: path + "/" + name)
            total += (attributes?[.size] as? NSNumber)?.int64Value ?? 0
        }
        return total
    }
}
