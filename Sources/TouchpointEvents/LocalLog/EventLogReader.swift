import Foundation
import Logging

/// Which events a query selects. Every criterion left nil matches everything.
public struct EventQuery: Sendable, Hashable {
    /// Only events with this exact name.
    public var name: String?
    /// Only events of sessions of this user.
    public var userId: String?
    /// Only events of this session.
    public var sessionId: UUID?
    /// Only events at or after this time.
    public var since: Date?
    /// Only events before this time.
    public var until: Date?

    public init(
        name: String? = nil, userId: String? = nil, sessionId: UUID? = nil, since: Date? = nil, until: Date? = nil
    ) {
        self.name = name
        self.userId = userId
        self.sessionId = sessionId
        self.since = since
        self.until = until
    }

    /// Whether `event` meets the event-level criteria (name and time).
    public func matches(_ event: Event) -> Bool {
        if let name, event.name != name { return false }
        if let since, event.timestamp < since { return false }
        if let until, event.timestamp >= until { return false }
        if let sessionId, event.sessionId != sessionId { return false }
        if let userId, event.userId != userId { return false }
        return true
    }
}

/// What reading found wrong with the files it read.
public struct EventLogReadReport: Sendable, Hashable {
    /// Lines that were not events (bad JSON, missing fields, over-long), skipped.
    public var damagedLines = 0
    /// Logs whose last line had no newline (a write cut off by a kill), skipped.
    public var tornTails = 0
    /// Sessions whose `session.json` was missing or damaged (their events are still read).
    public var damagedSessions = 0

    public init() {}

    mutating func add(_ other: EventLogReadReport) {
        damagedLines += other.damagedLines
        tornTails += other.tornTails
        damagedSessions += other.damagedSessions
    }
}

/// Reads a local log (sessions and events) without a recorder, streaming files in bounded memory.
///
/// The recorder's query methods use it, and so does the `touchpoint` tool. Damaged lines and
/// torn last lines are skipped and reported through the logger and in the returned report;
/// reading never fails on file content.
public struct EventLogReader: Sendable {
    /// The log's files.
    public let layout: LogLayout
    /// Where damaged content is reported.
    public var logger: Logger

    public init(directory: URL, logger: Logger = .touchpoint("events")) {
        layout = LogLayout(base: directory)
        self.logger = logger
    }

    /// A session found on disk, with its folder.
    public struct StoredSession: Sendable, Hashable {
        /// The session, from `session.json` (or rebuilt from its first event when that is missing).
        public let session: EventSession
        /// The folder, relative to the base directory.
        public let directory: String
    }

    // MARK: Sessions

    /// Every session on disk, oldest first.
    public func storedSessions(forUserFolder userFolder: String? = nil) -> (
        sessions: [StoredSession], report: EventLogReadReport
    ) {
        var report = EventLogReadReport()
        var result: [StoredSession] = []
        let fileManager = FileManager.default
        let users = userFolder.map { [$0] } ?? ((try? fileManager.contentsOfDirectory(atPath: layout.usersPath)) ?? [])
        for user in users where !user.hasPrefix(".") {
            let sessionsPath = layout.usersPath + "/" + user + "/sessions"
            guard let folders = try? fileManager.contentsOfDirectory(atPath: sessionsPath) else { continue }
            for folder in folders where !folder.hasPrefix(".") {
                let relative = "users/\(user)/sessions/\(folder)"
                if let session = loadSession(relative, report: &report) {
                    result.append(StoredSession(session: session, directory: relative))
                }
            }
        }
        result.sort {
            ($0.session.startedAt, $0.session.id.uuidString) < ($1.session.startedAt, $1.session.id.uuidString)
        }
        return (result, report)
    }

    /// Every session on disk, oldest first.
    public func sessions() -> [EventSession] { storedSessions().sessions.map(\.session) }

    /// The sessions of one user (nil: the anonymous ones), oldest first.
    public func sessions(forUserID userId: String?) -> [EventSession] {
        storedSessions(forUserFolder: LogLayout.userFolder(for: userId)).sessions
            .map(\.session)
            .filter { $0.userId == (userId?.isEmpty == true ? nil : userId) }
    }

    /// The folder of a session, relative to the base directory, or nil when it is not on disk.
    public func directory(ofSession id: UUID) -> String? {
        guard let users = try? FileManager.default.contentsOfDirectory(atPath: layout.usersPath) else { return nil }
        for user in users {
            let relative = "users/\(user)/sessions/\(id.uuidString)"
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: layout.path(relative), isDirectory: &isDirectory),
                isDirectory.boolValue
            {
                return relative
            }
        }
        return nil
    }

    // MARK: Events

    /// Calls `body` for each event of the session stored in `directory` (relative to the base),
    /// from byte `offset` of its `events.jsonl`, until `body` returns false.
    ///
    /// - Parameters:
    ///   - limit: where to stop reading: the committed length of a log that is being written
    ///     (``EventRecorder/committedLength(ofSessionDirectory:)``), nil for the file's end.
    /// - Returns: the offset after the last whole line read, and what was skipped.
    @discardableResult
    public func forEachEvent<Failure: Error>(
        inSessionDirectory directory: String, from offset: Int64 = 0, upTo limit: Int64? = nil,
        _ body: (_ event: Event, _ endOffset: Int64) throws(Failure) -> Bool
    ) throws(Failure) -> (end: Int64, report: EventLogReadReport) {
        var report = EventLogReadReport()
        var failure: Failure?
        let path = layout.path(directory) + "/events.jsonl"
        let reader = JSONLinesReader(path: path, maximumLineLength: 1 << 20)
        let end: Int64
        do {
            end = try reader.forEachLine(from: offset, upTo: limit) { line in
                if !line.isComplete {
                    report.tornTails += 1
                    logger.warning("skipped the unterminated last line of \(path) (a write was cut off)")
                    return true
                }
                if line.isOversized {
                    report.damagedLines += 1
                    logger.warning("skipped line \(line.number) of \(path): longer than 1 MB")
                    return true
                }
                if line.bytes.isEmpty { return true }
                let event: Event
                do {
                    event = try Event(jsonLine: line.bytes)
                } catch {
                    report.damagedLines += 1
                    logger.warning("skipped damaged line at byte \(line.offset) of \(path): \(error)")
                    // Zero bytes inside a line: pages of a mapped log that never reached the disk
                    // before a power cut. A whole event may follow them.
                    guard let zero = line.bytes.lastIndex(of: 0),
                        let rescued = try? Event(jsonLine: UnsafeBufferPointer(rebasing: line.bytes[(zero + 1)...]))
                    else { return true }
                    event = rescued
                }
                let outcome = Result { () throws(Failure) in try body(event, line.endOffset) }
                switch outcome {
                case .success(let keepGoing): return keepGoing
                case .failure(let error):
                    failure = error
                    return false
                }
            }
        } catch {
            logger.error("cannot read \(path): \(error)")
            return (offset, report)
        }
        if let failure { throw failure }
        return (end, report)
    }

    /// Calls `body` for each event that `query` selects, session by session (oldest first) and
    /// in log order within a session, until `body` returns false.
    @discardableResult
    public func forEachEvent<Failure: Error>(
        matching query: EventQuery = EventQuery(), _ body: (Event) throws(Failure) -> Bool
    ) throws(Failure) -> EventLogReadReport {
        var listing = storedSessions(forUserFolder: query.userId.map { LogLayout.userFolder(for: $0) })
        if let sessionId = query.sessionId {
            listing.sessions = listing.sessions.filter { $0.session.id == sessionId }
        }
        var report = listing.report
        for stored in listing.sessions {
            if let userId = query.userId, stored.session.userId != userId { continue }
            if let until = query.until, stored.session.startedAt >= until { continue }
            if let since = query.since, let ended = stored.session.endedAt, ended < since { continue }
            var keepGoing = true
            let result = try forEachEvent(inSessionDirectory: stored.directory) { (event, _) throws(Failure) in
                guard query.matches(event) else { return true }
                keepGoing = try body(event)
                return keepGoing
            }
            report.add(result.report)
            if !keepGoing { break }
        }
        return report
    }

    /// The events `query` selects, in order. Loads them all: prefer
    /// ``forEachEvent(matching:_:)`` for large logs.
    public func events(matching query: EventQuery = EventQuery()) -> [Event] {
        var result: [Event] = []
        forEachEvent(matching: query) { event in
            result.append(event)
            return true
        }
        return result
    }

    // MARK: Internals

    private func loadSession(_ relative: String, report: inout EventLogReadReport) -> EventSession? {
        let path = layout.path(relative) + "/session.json"
        do {
            if let bytes = try AtomicFile.read(path) { return try EventSession(jsonBytes: bytes) }
        } catch {
            logger.warning("damaged \(path): \(error)")
        }
        // No usable session.json (lost before it reached the disk, or damaged): rebuild from the
        // first event, so the session's events stay readable.
        report.damagedSessions += 1
        var first: Event?
        forEachEvent(inSessionDirectory: relative) { event, _ in
            first = event
            return false
        }
        guard let first else { return nil }
        return EventSession(id: first.sessionId, userId: first.userId, metadata: nil, startedAt: first.timestamp)
    }
}
