import Foundation
import Logging

extension EventRecorder {
    /// Starts a new session, ending the current one.
    ///
    /// Later automatic sessions (after the inactivity timeout, or after a relaunch) continue this
    /// user id and metadata until another call changes them.
    /// - Parameters:
    ///   - userID: the signed-in user, or nil for an anonymous session (stored under `anon`).
    ///   - metadata: values describing the session (plan, experiment variant, …).
    /// - Returns: the new session.
    @discardableResult
    public func startSession(userID: String? = nil, metadata: [String: EventValue]? = nil) async -> EventSession {
        let now = configuration.clock.now()
        let (session, ended) = withStateLock { state -> (EventSession, MappedLogFile?) in
            state.resumeChecked = true
            var endedFile: MappedLogFile?
            if let current = state.session {
                endedFile = current.openFile
                endLocked(current, at: now, &state)
            }
            let sink = startLocked(userId: userID, metadata: metadata, at: now, &state)
            return (sink.session, endedFile)
        }
        if let ended { syncQuietly(ended) }
        return session
    }

    /// Ends the current session: writes its `endedAt` and flushes its log to stable storage.
    ///
    /// The user and metadata end with it: the next event without a session of its own starts an
    /// anonymous session (stored under `anon`, no metadata), in this run and the next, until
    /// ``startSession(userID:metadata:)`` names a user again. (A session that ends by itself, after
    /// the inactivity timeout or when the app goes to the background, hands its user and metadata
    /// to the next one instead.)
    public func endSession() async {
        await endSession(keepsUser: false)
    }

    /// Ends the current session; `keepsUser` says whether the next automatic session continues its
    /// user and metadata (the app went to the background) or is anonymous (an explicit end).
    func endSession(keepsUser: Bool) async {
        let now = configuration.clock.now()
        let file: MappedLogFile? = withStateLock { state in
            state.resumeChecked = true
            var file: MappedLogFile?
            if let current = state.session {
                flushPendingLocked(&state)
                file = current.openFile
                endLocked(current, at: now, &state)
            }
            if !keepsUser { forgetUserLocked(&state) }
            return file
        }
        if let file {
            syncQuietly(file)
            AtomicFile.syncDirectory((file.path as NSString).deletingLastPathComponent)
        }
    }

    /// The open session, or nil when none has started yet (or the last one ended).
    public func currentSession() async -> EventSession? {
        state.withLock { $0.session?.session }
    }

    // MARK: Locked helpers

    /// The session the next event belongs to: the current one, a new one after the inactivity
    /// timeout, the previous run's if it is recent enough, or a new one.
    func ensureSessionLocked(at time: Date, _ state: inout State) -> SessionSink {
        if let sink = state.session {
            if let last = state.lastActivity, time.timeIntervalSince(last) > configuration.sessionTimeout {
                endLocked(sink, at: last, &state)
                return startLocked(userId: sink.session.userId, metadata: sink.session.metadata, at: time, &state)
            }
            return sink
        }
        if !state.resumeChecked {
            state.resumeChecked = true
            if let sink = resumeLocked(at: time, &state) { return sink }
        }
        return startLocked(userId: state.identity.userId, metadata: state.identity.metadata, at: time, &state)
    }

    /// The session an event of `userID` belongs to: the current (or resumed) session when it is
    /// that user's, otherwise a new one for the user, ending the current one.
    func ensureSessionLocked(at time: Date, for userID: String, _ state: inout State) -> SessionSink {
        if state.session == nil, !state.resumeChecked {
            state.resumeChecked = true
            _ = resumeLocked(at: time, &state)
        }
        if let sink = state.session {
            if sink.session.userId == userID { return ensureSessionLocked(at: time, &state) }
            endLocked(sink, at: time, &state)
        }
        return startLocked(userId: userID, metadata: nil, at: time, &state)
    }

    func startLocked(
        userId: String?, metadata: [String: EventValue]?, at time: Date, _ state: inout State
    ) -> SessionSink {
        let session = EventSession(
            id: state.ids.next(at: time), userId: userId, metadata: metadata,
            startedAt: Timestamp.millisecondAligned(time))
        let sink = SessionSink(
            session: session, layout: layout, alreadyOnDisk: false, fileOptions: configuration.logFile)
        // Opted out, nothing touches the disk: the session's files are made with its first event.
        let optedOut = isOptedOutLocked(&state)
        if !optedOut {
            do {
                try sink.prepare(layout: layout, journal: journal)
            } catch {
                // The session's events wait in the memory buffer; `prepare` is retried with them.
                noteWriteFailureLocked(error, &state)
            }
        }
        state.session = sink
        state.lastActivity = time
        state.identity = (userId, metadata)
        if !optedOut { saveCurrentSessionLocked(session) }
        for consumer in state.consumers { consumer.eventRecorder(self, didStart: session) }
        scheduleRetentionLocked(&state)
        return sink
    }

    func endLocked(_ sink: SessionSink, at time: Date, _ state: inout State) {
        sink.session.endedAt = Timestamp.millisecondAligned(time)
        if sink.isOnDisk {
            do {
                try sink.writeMetadata(durable: false)
            } catch {
                logger.error("cannot record the end of session \(sink.session.id): \(error)")
            }
            saveCurrentSessionLocked(sink.session)
        }
        sink.close()
        if sink.needsSync {
            sink.needsSync = false
            state.unsynced.append(sink)
            scheduleSyncLocked(&state)
        }
        state.session = nil
        state.lastActivity = nil
        for consumer in state.consumers { consumer.eventRecorder(self, didEnd: sink.session) }
    }

    /// Picks up the previous run's open session when its last event is within the timeout,
    /// repairing a torn last line; otherwise closes it and remembers its user for the next one.
    func resumeLocked(at time: Date, _ state: inout State) -> SessionSink? {
        let saved: EventSession
        do {
            guard let bytes = try AtomicFile.read(layout.currentSessionPath) else { return nil }
            saved = try EventSession(jsonBytes: bytes)
        } catch {
            logger.warning("ignoring \(layout.currentSessionPath): \(error)")
            return nil
        }
        state.identity = (saved.userId, saved.metadata)
        guard saved.endedAt == nil else { return nil }
        let sink = SessionSink(session: saved, layout: layout, alreadyOnDisk: true, fileOptions: configuration.logFile)
        guard FileManager.default.fileExists(atPath: sink.directoryPath) else { return nil }
        do {
            try sink.prepare(layout: layout, journal: journal)
        } catch {
            logger.warning("cannot reopen session \(saved.id): \(error)")
            return nil
        }
        noteRepairLocked(sink, &state)
        var lastEvent = saved.startedAt
        if let line = try? sink.openFile?.lastRecord(),
            let event = try? line.withUnsafeBufferPointer({ (bytes) throws(EventLineError) in
                try Event(jsonLine: bytes)
            })
        {
            lastEvent = event.timestamp
        }
        guard time.timeIntervalSince(lastEvent) <= configuration.sessionTimeout else {
            endLocked(sink, at: lastEvent, &state)
            return nil
        }
        state.session = sink
        state.lastActivity = lastEvent
        for consumer in state.consumers { consumer.eventRecorder(self, didStart: sink.session) }
        return sink
    }

    /// Forgets the user and metadata automatic sessions would continue, here and in the next run
    /// (whose resume reads them from `state/current-session.json`).
    func forgetUserLocked(_ state: inout State) {
        state.identity = (nil, nil)
        do {
            try AtomicFile.remove(layout.currentSessionPath)
        } catch {
            logger.error("cannot forget the ended session's user: \(error)")
        }
    }

    /// Keeps `state/current-session.json` in step, so the next run can resume or continue the user.
    func saveCurrentSessionLocked(_ session: EventSession) {
        do {
            try AtomicFile.createDirectory(layout.statePath)
            try AtomicFile.write(session.jsonBytes(), to: layout.currentSessionPath, durable: false)
        } catch {
            logger.error("cannot save the current session: \(error)")
        }
    }

    func syncQuietly(_ file: MappedLogFile) {
        do { try file.sync() } catch { logger.error("\(error)") }
    }

    // MARK: Lifecycle

    /// Reacts to the app's lifecycle: in the background the log is flushed to stable storage and,
    /// when ``EventRecorderConfiguration/endsSessionInBackground`` is set, the session ends.
    /// The recorder keeps observing for as long as it lives.
    public func attach(lifecycle: any AppLifecycle) {
        attach(lifecycle: lifecycle, endsSessionInBackground: configuration.endsSessionInBackground)
    }

    /// Reacts to the app's lifecycle: in the background the log is flushed to stable storage and,
    /// when `endsSessionInBackground` is true, the session ends (the next one continues its user
    /// and metadata); when the app terminates, the session ends. The recorder keeps observing for
    /// as long as it lives.
    /// - Parameters:
    ///   - lifecycle: the source of lifecycle events.
    ///   - endsSessionInBackground: whether going to the background ends the session.
    public func attach(lifecycle: any AppLifecycle, endsSessionInBackground: Bool) {
        let observation = lifecycle.observe { [weak self] event in
            guard let self, event == .didEnterBackground || event == .willTerminate else { return }
            Task {
                try? await self.flush()
                if endsSessionInBackground || event == .willTerminate {
                    await self.endSession(keepsUser: true)
                }
                self.state.withLock { $0.lifecycleEventsHandled += 1 }
            }
        }
        state.withLock { $0.observations.append(observation) }
    }

    /// How many background and terminate events the recorder has finished handling: what a test
    /// waits for before it checks what the handling did, or did not, do.
    public var lifecycleEventsHandled: Int { state.withLock { $0.lifecycleEventsHandled } }

    /// Writes any events waiting in memory and flushes every log to stable storage.
    /// - Throws: the disk's error when buffered events still cannot be written.
    public func flush() async throws {
        let (files, failure): ([MappedLogFile], (any Error)?) = withStateLock { state in
            flushPendingLocked(&state)
            var sinks = state.unsynced
            state.unsynced.removeAll()
            if let current = state.session { sinks.append(current) }
            let files = sinks.compactMap { sink -> MappedLogFile? in
                sink.needsSync = false
                return sink.openFile
            }
            return (files, state.pending.isEmpty ? nil : state.lastWriteError)
        }
        for file in files { try file.sync() }
        if let failure { throw failure }
    }
}
