import Foundation
import Logging
import TouchpointCore
import TouchpointEvents

/// Reads the next batch from the recorder's log, from a cursor on: the log is the outbox.
///
/// Sessions are read in session-journal order and each session's `events.jsonl` from a byte
/// offset, so a read costs what it returns, never the size of the history. Only whole lines are
/// read: an open session keeps growing while it is read, and its unfinished last line is left for
/// the next read.
struct OutboxReader: Sendable {
    let layout: LogLayout
    let journal: SessionJournal
    let log: EventLogReader
    let encoder: SegmentMessage
    let logger: Logger

    init(directory: URL, library: DeliveryLibrary, context: DeliveryContext? = nil, logger: Logger) {
        layout = LogLayout(base: directory)
        journal = SessionJournal(layout: layout)
        log = EventLogReader(directory: directory, logger: logger)
        encoder = SegmentMessage(library: library, context: context)
        self.logger = logger
    }

    /// Reads up to `limits` worth of messages from `cursor` on.
    func read(from cursor: DeliveryCursor, limits: BatchLimits) -> OutboxBatch {
        var batch = OutboxBatch(start: cursor)
        var position = cursor
        var scratch = JSONWriter(capacity: 1024)
        let budget = limits.maximumBytes - BatchEnvelope.overhead
        batch.messages.reserveCapacity(min(budget, 64 * 1024))
        var restarted = false

        while true {
            // The session at the cursor and whether another follows, read *before* its events:
            // a session ends before the next one is journaled, so once a next entry exists the
            // current session's file is complete and may be read to its end and left behind.
            let found: (current: SessionJournal.Entry?, next: SessionJournal.Entry?)
            do {
                found = try entries(at: position.journalOffset)
            } catch {
                batch.readError = "\(error)"
                batch.reachedEnd = true
                break
            }
            guard let current = found.current, position.sessionId == nil || current.sessionId == position.sessionId
            else {
                if position.sessionId == nil {  // an empty log
                    batch.reachedEnd = true
                    break
                }
                // The journal no longer holds the cursor's session where it was: it was cleared
                // or replaced by another process. Deliver it again from the start; the collector
                // drops what it already has.
                guard !restarted else {
                    batch.reachedEnd = true
                    break
                }
                logger.warning(
                    "the session journal changed under the delivery cursor (\(position)); reading it again from the start"
                )
                restarted = true
                position = .start
                batch.start = .start
                continue
            }
            if position.sessionId == nil {
                position = DeliveryCursor(
                    journalOffset: current.offset, sessionId: current.sessionId,
                    eventOffset: current.offset == position.journalOffset ? position.eventOffset : 0)
            }

            let path = layout.path(current.directory) + "/events.jsonl"
            // Up to the committed length when this process writes the file (what a mapped log
            // holds after it is allocated space, not events), else to its last whole line.
            let sizeBefore = MappedLogFile.recordsLength(ofFileAt: path)
            var stoppedAtLimit = false
            let result = log.forEachEvent(
                inSessionDirectory: current.directory, from: position.eventOffset, upTo: sizeBefore
            ) {
                event, endOffset in
                scratch.reset()
                encoder.write(event, to: &scratch)
                let size = scratch.bytes.count
                if size > limits.maximumEventBytes {
                    batch.oversized.append(.init(messageId: event.id, bytes: size))
                    position.eventOffset = endOffset
                    return true
                }
                if batch.count >= limits.maximumEvents
                    || (batch.count > 0 && batch.messages.count + 1 + size > budget)
                {
                    stoppedAtLimit = true
                    return false
                }
                if batch.count > 0 { batch.messages.append(UInt8(ascii: ",")) }
                batch.messages.append(contentsOf: scratch.bytes)
                batch.messageIds.append(event.id)
                position.eventOffset = endOffset
                return true
            }
            if stoppedAtLimit { break }
            if let sizeBefore, result.end < sizeBefore, result.report.tornTails == 0 {
                // Whole lines the reader did not get to: the file could not be read. Stop here
                // rather than skip them; the next read tries again.
                batch.readError = "cannot read \(path) past byte \(result.end)"
                batch.reachedEnd = true
                break
            }
            position.eventOffset = max(position.eventOffset, result.end)
            guard let next = found.next else {
                batch.reachedEnd = true
                break
            }
            position = DeliveryCursor(journalOffset: next.offset, sessionId: next.sessionId, eventOffset: 0)
        }
        batch.end = position
        return batch
    }

    /// Where the log ends now: the last session's entry and its file's size. Used as the target
    /// of ``EventDispatcher/dispatch(timeout:failFast:)``; reads the journal from `cursor` on.
    func end(from cursor: DeliveryCursor) -> DeliveryCursor {
        var last: SessionJournal.Entry?
        do {
            try journal.entries(from: cursor.journalOffset) { entry in
                last = entry
                return true
            }
        } catch {
            logger.error("cannot read the session journal: \(error)")
        }
        guard let last else { return cursor }
        let size = MappedLogFile.recordsLength(ofFileAt: layout.path(last.directory) + "/events.jsonl") ?? 0
        return DeliveryCursor(journalOffset: last.offset, sessionId: last.sessionId, eventOffset: size)
    }

    /// Bytes of events not yet delivered, and in how many sessions: for progress reports.
    func backlog(from cursor: DeliveryCursor) -> DeliveryBacklog {
        var backlog = DeliveryBacklog()
        do {
            try journal.entries(from: cursor.journalOffset) { entry in
                let size = MappedLogFile.recordsLength(ofFileAt: layout.path(entry.directory) + "/events.jsonl") ?? 0
                let offset = entry.sessionId == cursor.sessionId ? cursor.eventOffset : 0
                if size > offset {
                    backlog.bytes += size - offset
                    backlog.sessions += 1
                }
                return true
            }
        } catch {
            logger.error("cannot read the session journal: \(error)")
        }
        return backlog
    }

    /// The journal entry at `offset` (or the first one after it, when the line there is damaged)
    /// and the entry after that.
    private func entries(at offset: Int64) throws -> (current: SessionJournal.Entry?, next: SessionJournal.Entry?) {
        var found: [SessionJournal.Entry] = []
        try journal.entries(from: offset) { entry in
            found.append(entry)
            return found.count < 2
        }
        return (found.first, found.count > 1 ? found[1] : nil)
    }
}
