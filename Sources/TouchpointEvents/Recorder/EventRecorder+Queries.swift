import Foundation
import Logging

extension EventRecorder {
    /// A reader over this recorder's files, reporting through the recorder's logger.
    public var reader: EventLogReader { EventLogReader(directory: directory, logger: logger) }

    /// The events of the open session, in order (events still waiting in memory for the disk
    /// included).
    public func eventsInCurrentSession() async -> [Event] {
        let snapshot: (relative: String, committed: Int64?, waiting: [[UInt8]])? = state.withLock { state in
            guard let sink = state.session else { return nil }
            return (
                sink.relativeDirectory, sink.openFile?.committedLength,
                state.pending.filter { $0.sink === sink }.map(\.bytes)
            )
        }
        guard let snapshot else { return [] }
        var events: [Event] = []
        let result = reader.forEachEvent(inSessionDirectory: snapshot.relative, upTo: snapshot.committed) { event, _ in
            events.append(event)
            return true
        }
        noteRead(result.report)
        for line in snapshot.waiting {
            if let event = try? line.dropLast().withUnsafeBufferPointer({ (bytes) throws(EventLineError) in
                try Event(jsonLine: bytes)
            }) {
                events.append(event)
            }
        }
        return events
    }

    /// Every stored event of every user and session, sessions oldest first.
    ///
    /// This loads the whole history into memory; for large logs stream it with
    /// ``forEachEvent(matching:_:)``.
    public func allEvents() async -> [Event] {
        var events: [Event] = []
        await forEachEvent { event in
            events.append(event)
            return true
        }
        return events
    }

    /// Streams the stored events that `query` selects, in bounded memory, until `body` returns false.
    public func forEachEvent<Failure: Error>(
        matching query: EventQuery = EventQuery(), _ body: (Event) throws(Failure) -> Bool
    ) async throws(Failure) {
        let report = try reader.forEachEvent(matching: query, body)
        noteRead(report)
    }

    /// Every stored session, oldest first.
    public func listAllSessions() async -> [EventSession] {
        let listing = reader.storedSessions()
        noteRead(listing.report)
        return listing.sessions.map(\.session)
    }

    /// The stored sessions of one user (nil: the anonymous ones), oldest first.
    public func listSessions(forUserID userId: String?) async -> [EventSession] {
        reader.sessions(forUserID: userId)
    }

    /// The stored events of one session, in order; empty when the session is unknown.
    public func events(forSessionID id: UUID) async -> [Event] {
        guard let directory = reader.directory(ofSession: id) else { return [] }
        var events: [Event] = []
        let result = reader.forEachEvent(inSessionDirectory: directory) { event, _ in
            events.append(event)
            return true
        }
        noteRead(result.report)
        return events
    }

    /// Deletes every stored session, event and state file (the install id included, so the next
    /// event has a new anonymous id), and ends the open session without recording its end. The
    /// user's consent (``optOut(discardingPending:)``) is kept.
    public func clear() async {
        let consumers: [any EventConsumer] = withStateLock { state in
            state.session = nil
            state.lastActivity = nil
            state.pending.removeAll()
            state.pendingBytes = 0
            state.statistics.bufferedInMemory = 0
            state.unsynced.removeAll()
            state.identity = (nil, nil)
            state.anonymousId = nil
            state.resumeChecked = true
            for folder in [layout.usersPath, layout.statePath] {
                do {
                    if FileManager.default.fileExists(atPath: folder) {
                        try FileManager.default.removeItem(atPath: folder)
                    }
                } catch {
                    logger.error("cannot delete \(folder): \(error)")
                }
            }
            // The user's choice outlives the data.
            if let optedOut = state.optedOut, optedOut != configuration.optedOutByDefault {
                saveConsentLocked(optedOut)
            }
            return state.consumers
        }
        for consumer in consumers { consumer.eventRecorderDidClear(self) }
    }

    func noteRead(_ report: EventLogReadReport) {
        guard report.damagedLines + report.tornTails > 0 else { return }
        state.withLock { $0.statistics.damagedLinesSkipped += report.damagedLines + report.tornTails }
    }
}
