import Foundation
import Logging

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// Records events into sessions and keeps them on disk as JSON Lines; the spine of Touchpoint.
///
/// ```swift
/// let session = await EventRecorder.shared.startSession(userID: "user-123", metadata: [
///     "plan": .string("pro"),
/// ])
/// EventRecorder.shared.record("button_tap", properties: ["screen": .string("Home")])
/// let events = await EventRecorder.shared.eventsInCurrentSession()
/// ```
///
/// **Durable on return.** When ``record(_:properties:type:attachment:)`` returns, the event's line
/// is in `events.jsonl`: copied into the memory-mapped segment of the session's log
/// (``MappedLogFile``), that is into the kernel's page cache, so a kill of the process an instant
/// later loses nothing. The log is allocated ahead and faulted in off the caller's thread; where
/// it has no allocated space (a full disk) the line is written with `write(2)`. `fsync` is
/// grouped (at most once per ``EventRecorderConfiguration/syncInterval``, and at ``endSession()``).
/// While a session is open its log ends with allocated zero bytes; when it ends, the log is
/// truncated to its lines, JSON Lines byte for byte.
///
/// **Never blocks the app.** `record` is synchronous and callable from any thread, the main thread
/// included: it encodes one line and copies it into the log under a small lock, with no actor hop,
/// no system call and no disk scan. Everything else (queries, session changes, retention) is
/// `async` or runs in the background.
///
/// **One pipeline.** Every event, whichever API recorded it, is handed in log order to the
/// registered ``EventConsumer``s (routing, delivery, surveys), to every ``eventStream(bufferingPolicy:)``
/// and to ``eventsPublisher``.
public final class EventRecorder: Sendable {
    /// The recorder most apps use, storing under ``defaultDirectory``.
    public static let shared = EventRecorder()

    /// Where this recorder keeps its files.
    public let directory: URL
    /// The recorder's settings.
    public let configuration: EventRecorderConfiguration

    let layout: LogLayout
    let journal: SessionJournal
    let logger: Logger
    let state: Locked<State>
    let reentrant = ReentrantRequests()
    let syncQueue = DispatchQueue(label: "touchpoint.events.sync", qos: .utility)
    let publisherQueue = DispatchQueue(label: "touchpoint.events.publisher")

    /// Creates a recorder that stores under `directory`.
    ///
    /// Creating a recorder reads nothing and writes nothing: start-up costs the same with ten
    /// thousand sessions on disk as with none. The open session of a previous run is picked up
    /// on the first event if it is younger than the session timeout.
    /// - Parameters:
    ///   - directory: the base directory; ``defaultDirectory`` when nil.
    ///   - configuration: session timeout, durability, limits, retention, clock and logger.
    public init(directory: URL? = nil, configuration: EventRecorderConfiguration = .init()) {
        let base = directory ?? Self.defaultDirectory
        self.directory = base
        self.configuration = configuration
        layout = LogLayout(base: base)
        journal = SessionJournal(layout: layout)
        logger = configuration.logger
        state = Locked(State())
    }

    /// `Documents/Touchpoint` on Apple platforms; `$XDG_DATA_HOME/touchpoint` (or
    /// `~/.local/share/touchpoint`) elsewhere.
    public static var defaultDirectory: URL {
        #if canImport(Darwin)
        let documents =
            FileManager.default.urls(for: .documentDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        return documents.appendingPathComponent("Touchpoint", isDirectory: true)
        #else
        let environment = ProcessInfo.processInfo.environment
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty {
            return URL(fileURLWithPath: data, isDirectory: true).appendingPathComponent("touchpoint")
        }
        return FileManager.default.homeDirectoryForCurrentUser
            .appendingPathComponent(".local/share/touchpoint", isDirectory: true)
        #endif
    }

    // MARK: Recording

    /// Records an event in the current session, starting one if there is none.
    ///
    /// Callable from any thread; returns once the event's line is in `events.jsonl` (a memory
    /// copy into the log's mapped segment). An event
    /// whose line is larger than ``EventRecorderConfiguration/maximumEventBytes`` is rejected:
    /// it is logged and counted, and nil is returned. While the disk refuses writes the event
    /// waits in a bounded memory buffer and is written when the disk recovers.
    /// - Parameters:
    ///   - name: the event's name, e.g. `checkout_success`.
    ///   - properties: the event's properties, any JSON values.
    ///   - type: the kind of call; ``EventType/identify`` events carry traits as properties.
    ///   - attachment: anything to hand to consumers alongside the event (not stored).
    /// - Returns: the event as recorded, or nil when it was rejected, when the user opted out
    ///   (``optOut(discardingPending:)``), or when a consumer recorded it from inside its
    ///   callback (it is then recorded right after).
    @discardableResult
    public func record(
        _ name: String,
        properties: [String: EventValue]? = nil,
        type: EventType = .track,
        attachment: (any Sendable)? = nil
    ) -> Event? {
        record(
            RecordRequest(
                name: name, properties: properties ?? [:], type: type, attachment: attachment,
                time: configuration.clock.now()))
    }

    /// Records an event for a user: in the current session when it is that user's, otherwise in
    /// a new session for the user (the current one ends).
    ///
    /// Choosing the session and writing the event happen under one lock, so concurrent calls for
    /// different users never put an event into the other user's session. When the recorder has
    /// no session yet, the previous run's session is resumed if it is this user's and recent.
    /// Otherwise the same as ``record(_:properties:type:attachment:)``.
    /// - Parameters:
    ///   - userID: the user the event belongs to; an empty id is no id (the current session's
    ///     user is kept).
    @discardableResult
    public func record(
        _ name: String,
        properties: [String: EventValue]? = nil,
        type: EventType = .track,
        attachment: (any Sendable)? = nil,
        userID: String
    ) -> Event? {
        record(
            RecordRequest(
                name: name, properties: properties ?? [:], type: type, attachment: attachment,
                time: configuration.clock.now(), userID: userID.isEmpty ? nil : userID))
    }

    private func record(_ request: RecordRequest) -> Event? {
        if isLockedByCurrentThread {
            reentrant.requests.append(request)
            return nil
        }
        return withStateLock { state in recordLocked(request, &state) }
    }

    /// Counters of what the recorder did: events recorded, rejected, buffered, dropped.
    public var statistics: RecorderStatistics {
        precondition(!isLockedByCurrentThread, "EventRecorder.statistics read from inside a consumer callback")
        return state.withLock { $0.statistics }
    }

    /// The stable anonymous id of this installation (kept in `state/install-id`).
    public var anonymousId: String {
        precondition(!isLockedByCurrentThread, "EventRecorder.anonymousId read from inside a consumer callback")
        return state.withLock { loadAnonymousIdLocked(&$0) }
    }

    // MARK: Consumers

    /// Registers a consumer: from now on it receives every event in record order.
    public func addConsumer(_ consumer: any EventConsumer) {
        precondition(!isLockedByCurrentThread, "EventRecorder.addConsumer called from inside a consumer callback")
        state.withLock { state in
            if !state.consumers.contains(where: { $0 === consumer }) { state.consumers.append(consumer) }
        }
    }

    /// Unregisters a consumer.
    public func removeConsumer(_ consumer: any EventConsumer) {
        precondition(!isLockedByCurrentThread, "EventRecorder.removeConsumer called from inside a consumer callback")
        state.withLock { state in state.consumers.removeAll { $0 === consumer } }
    }

    // MARK: The locked record path

    /// Takes the lock, marks this thread as its holder (so a consumer that records is queued
    /// instead of deadlocking), runs `body`, then records what consumers queued.
    func withStateLock<Result>(_ body: (inout State) -> Result) -> Result {
        state.withLock { state in
            let marker = Unmanaged.passUnretained(self).toOpaque()
            pthread_setspecific(Self.holderKey, marker)
            defer { pthread_setspecific(Self.holderKey, nil) }
            let result = body(&state)
            var drained = 0
            while !reentrant.requests.isEmpty {
                let next = reentrant.requests.removeFirst()
                drained += 1
                if drained > Self.maximumReentrantRecords {
                    state.statistics.droppedReentrant += 1 + reentrant.requests.count
                    logger.error(
                        "consumers recorded more than \(Self.maximumReentrantRecords) events from their callbacks in a row; dropping \(1 + reentrant.requests.count), last \"\(next.name)\""
                    )
                    reentrant.requests.removeAll()
                    break
                }
                _ = recordLocked(next, &state)
            }
            return result
        }
    }

    static let maximumReentrantRecords = 64

    var isLockedByCurrentThread: Bool {
        pthread_getspecific(Self.holderKey) == Unmanaged.passUnretained(self).toOpaque()
    }

    static let holderKey: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "pthread_key_create failed: \(status)")
        return key
    }()

    func recordLocked(_ request: RecordRequest, _ state: inout State) -> Event? {
        guard !isOptedOutLocked(&state) else {
            state.statistics.refusedOptedOut += 1
            return nil
        }
        let sink =
            if let userID = request.userID {
                ensureSessionLocked(at: request.time, for: userID, &state)
            } else {
                ensureSessionLocked(at: request.time, &state)
            }
        let milliseconds = Timestamp.milliseconds(request.time)
        let anonymousId = loadAnonymousIdLocked(&state)
        let event = Event(
            id: state.ids.next(at: request.time),
            type: request.type,
            name: request.name,
            timestamp: Timestamp.date(milliseconds: milliseconds),
            sessionId: sink.session.id,
            userId: sink.session.userId,
            anonymousId: anonymousId,
            properties: request.properties)
        // The line as `event.jsonLine()` writes it, encoded without building it field by field.
        let encoder = state.encoder
        encoder.encode(
            id: event.id, type: event.type, name: event.name, milliseconds: milliseconds,
            tail: sink.lineTail(anonymousId: anonymousId), properties: event.properties)
        let size = encoder.count
        guard size <= configuration.maximumEventBytes else {
            state.statistics.rejectedOversized += 1
            logger.error(
                "event \"\(request.name)\" rejected: its line is \(size) bytes, over the limit of \(configuration.maximumEventBytes)"
            )
            return nil
        }
        appendLocked(encoder.bytes, to: sink, &state)
        state.lastActivity = request.time
        state.statistics.recorded += 1
        for consumer in state.consumers {
            consumer.eventRecorder(self, didRecord: event, attachment: request.attachment)
        }
        for continuation in state.streams.values { continuation.yield(event) }
        if let subject = state.subject {
            publisherQueue.async { subject.send(event) }
        }
        return event
    }

    /// Writes a line to the session's log, or keeps it in memory while the disk refuses writes.
    func appendLocked(_ line: UnsafeRawBufferPointer, to sink: SessionSink, _ state: inout State) {
        if !state.pending.isEmpty { flushPendingLocked(&state) }
        if state.pending.isEmpty {
            do {
                try sink.prepare(layout: layout, journal: journal)
                try sink.append(line)
                noteRepairLocked(sink, &state)
                scheduleSyncLocked(&state)
                return
            } catch {
                noteWriteFailureLocked(error, &state)
            }
        }
        state.pending.append(PendingLine(sink: sink, bytes: Array(line)))
        state.pendingBytes += line.count
        while state.pendingBytes > configuration.memoryBufferBytes, !state.pending.isEmpty {
            let dropped = state.pending.removeFirst()
            state.pendingBytes -= dropped.bytes.count
            state.statistics.droppedFromBuffer += 1
        }
        state.statistics.bufferedInMemory = state.pending.count
        scheduleRetryLocked(&state)
    }

    /// Writes buffered lines in order until the disk refuses one.
    func flushPendingLocked(_ state: inout State) {
        var written = 0
        while let first = state.pending.first {
            do {
                try first.sink.prepare(layout: layout, journal: journal)
                try first.bytes.withUnsafeBytes { raw in try first.sink.append(raw) }
                noteRepairLocked(first.sink, &state)
            } catch {
                noteWriteFailureLocked(error, &state)
                break
            }
            state.pending.removeFirst()
            state.pendingBytes -= first.bytes.count
            written += 1
        }
        state.statistics.bufferedInMemory = state.pending.count
        if written > 0 && state.pending.isEmpty {
            state.diskFailing = false
            logger.notice("the disk accepts writes again; wrote \(written) buffered events")
            scheduleSyncLocked(&state)
        }
    }

    func noteWriteFailureLocked(_ error: any Error, _ state: inout State) {
        state.statistics.writeFailures += 1
        state.lastWriteError = error
        if !state.diskFailing {
            state.diskFailing = true
            logger.error(
                "cannot write events: \(error); keeping them in memory (up to \(configuration.memoryBufferBytes) bytes) and retrying every \(configuration.retryInterval) s"
            )
        }
    }

    func noteRepairLocked(_ sink: SessionSink, _ state: inout State) {
        // Nearly always nothing was cut: spare the record path the lookup (a hash of the id).
        guard sink.repairedBytes > 0, sink.repairedBytes > state.reportedRepairs[sink.session.id, default: 0] else {
            return
        }
        let repaired = sink.repairedBytes - state.reportedRepairs[sink.session.id, default: 0]
        state.reportedRepairs[sink.session.id] = sink.repairedBytes
        state.statistics.repairedTornBytes += repaired
        logger.warning("cut \(repaired) bytes of a torn last line from \(sink.eventsPath)")
    }

    func scheduleSyncLocked(_ state: inout State) {
        guard !state.syncScheduled else { return }
        state.syncScheduled = true
        syncQueue.asyncAfter(deadline: .now() + configuration.syncInterval) { [weak self] in
            self?.syncNow()
        }
    }

    func scheduleRetryLocked(_ state: inout State) {
        guard !state.retryScheduled else { return }
        state.retryScheduled = true
        syncQueue.asyncAfter(deadline: .now() + configuration.retryInterval) { [weak self] in
            guard let self else { return }
            self.withStateLock { state in
                state.retryScheduled = false
                self.flushPendingLocked(&state)
                if !state.pending.isEmpty { self.scheduleRetryLocked(&state) }
            }
        }
    }

    /// Flushes written lines to stable storage, outside the lock.
    func syncNow() {
        let files: [MappedLogFile] = state.withLock { state in
            state.syncScheduled = false
            var sinks = state.unsynced
            state.unsynced.removeAll()
            if let current = state.session, current.needsSync { sinks.append(current) }
            return sinks.compactMap { sink in
                sink.needsSync = false
                return sink.openFile
            }
        }
        for file in files {
            do { try file.sync() } catch { logger.error("\(error)") }
        }
    }

    func loadAnonymousIdLocked(_ state: inout State) -> String {
        if let id = state.anonymousId { return id }
        let path = layout.installIDPath
        if let bytes = try? AtomicFile.read(path) {
            let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if !text.isEmpty && text.count <= 128 {
                state.anonymousId = text
                return text
            }
        }
        let id = UUID().uuidString
        do {
            try AtomicFile.createDirectory(layout.statePath)
            try AtomicFile.write(Array(id.utf8), to: path)
        } catch {
            logger.error("cannot keep the install id: \(error); using \(id) for this run")
        }
        state.anonymousId = id
        return id
    }
}

extension EventRecorder {
    /// What the recorder keeps behind its lock.
    struct State {
        var session: SessionSink?
        var lastActivity: Date?
        var resumeChecked = false
        /// The user and metadata the next automatic session continues.
        var identity: (userId: String?, metadata: [String: EventValue]?) = (nil, nil)
        var anonymousId: String?
        /// Whether the user opted out; nil until `state/consent` has been read.
        var optedOut: Bool?
        /// What ``setOptedOutByDefault(_:)`` set, over the configuration's.
        var optedOutByDefault: Bool?
        var ids = UUIDv7Generator()
        let encoder = EventLineEncoder()
        var consumers: [any EventConsumer] = []
        var streams: [Int: AsyncStream<Event>.Continuation] = [:]
        var nextStreamID = 0
        var subject: EventSubject?
        var pending: [PendingLine] = []
        var pendingBytes = 0
        var diskFailing = false
        var syncScheduled = false
        var retryScheduled = false
        var retentionScheduled = false
        /// Sessions ended with writes not yet flushed to stable storage.
        var unsynced: [SessionSink] = []
        var reportedRepairs: [UUID: Int64] = [:]
        var lastWriteError: (any Error)?
        var observations: [AppLifecycleObservation] = []
        /// Lifecycle events whose handling (flush, maybe end the session) has finished.
        var lifecycleEventsHandled = 0
        var statistics = RecorderStatistics()
    }

    /// A line waiting in memory for the disk.
    struct PendingLine {
        let sink: SessionSink
        let bytes: [UInt8]
    }

    /// One call to `record`, captured on the caller's thread.
    struct RecordRequest {
        let name: String
        let properties: [String: EventValue]
        let type: EventType
        let attachment: (any Sendable)?
        let time: Date
        /// The user whose session the event must go into; nil for the current session's.
        var userID: String?
    }

    /// Records that consumers made from inside their callbacks, waiting for the lock holder.
    final class ReentrantRequests: @unchecked Sendable {
        // Safe: only the thread that holds the recorder's lock reads or writes `requests`.
        var requests: [RecordRequest] = []
    }
}
