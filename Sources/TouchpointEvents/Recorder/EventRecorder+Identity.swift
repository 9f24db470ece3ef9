import Foundation
import Logging

extension EventRecorder {
    // MARK: Consent

    /// Whether the user opted out of recording: while true, ``record(_:properties:type:attachment:)``
    /// records nothing (and returns nil), nothing is written, and delivery sends nothing.
    ///
    /// Remembered across launches in `state/consent`; before any choice,
    /// ``EventRecorderConfiguration/optedOutByDefault``.
    public var isOptedOut: Bool {
        precondition(!isLockedByCurrentThread, "EventRecorder.isOptedOut read from inside a consumer callback")
        return state.withLock { isOptedOutLocked(&$0) }
    }

    /// Stops recording until ``optIn()``, in this run and the next ones.
    ///
    /// ```swift
    /// await EventRecorder.shared.optOut(discardingPending: true)  // and forget what was recorded
    /// ```
    /// - Parameter discardingPending: whether to delete what was recorded and not yet delivered
    ///   too (every stored session, event and state file, the anonymous id included: after
    ///   ``optIn()`` the installation starts over), or keep it to be sent after ``optIn()``.
    public func optOut(discardingPending: Bool = false) async {
        await setOptedOut(true)
        if discardingPending { await clear() }
    }

    /// Records again after ``optOut(discardingPending:)`` (remembered across launches); what was
    /// kept is delivered again.
    public func optIn() async {
        await setOptedOut(false)
    }

    private func setOptedOut(_ optedOut: Bool) async {
        let (changed, consumers): (Bool, [any EventConsumer]) = withStateLock { state in
            let changed = isOptedOutLocked(&state) != optedOut
            state.optedOut = optedOut
            saveConsentLocked(optedOut)
            return (changed, state.consumers)
        }
        guard changed else { return }
        logger.notice(optedOut ? "the user opted out: nothing is recorded" : "the user opted in: recording again")
        for consumer in consumers { consumer.eventRecorder(self, didChangeConsent: optedOut) }
    }

    /// Sets whether recording is opted out while the user has made no choice:
    /// ``EventRecorderConfiguration/optedOutByDefault`` for a recorder made elsewhere (``shared``).
    /// A choice the user made (``optOut(discardingPending:)``, ``optIn()``) still wins.
    public func setOptedOutByDefault(_ optedOut: Bool) {
        precondition(
            !isLockedByCurrentThread, "EventRecorder.setOptedOutByDefault called from inside a consumer callback")
        let (changed, now, consumers): (Bool, Bool, [any EventConsumer]) = withStateLock { state in
            let before = isOptedOutLocked(&state)
            state.optedOutByDefault = optedOut
            state.optedOut = nil  // read again: a saved choice wins over the default
            let after = isOptedOutLocked(&state)
            return (before != after, after, state.consumers)
        }
        guard changed else { return }
        for consumer in consumers { consumer.eventRecorder(self, didChangeConsent: now) }
    }

    func isOptedOutLocked(_ state: inout State) -> Bool {
        if let optedOut = state.optedOut { return optedOut }
        let saved: Bool?
        switch (try? AtomicFile.read(layout.consentPath)).map({ String(decoding: $0, as: UTF8.self) }) {
        case "opted-out"?: saved = true
        case "opted-in"?: saved = false
        default: saved = nil
        }
        let optedOut = saved ?? state.optedOutByDefault ?? configuration.optedOutByDefault
        state.optedOut = optedOut
        return optedOut
    }

    func saveConsentLocked(_ optedOut: Bool) {
        do {
            try AtomicFile.createDirectory(layout.statePath)
            try AtomicFile.write(Array((optedOut ? "opted-out" : "opted-in").utf8), to: layout.consentPath)
        } catch {
            logger.error("cannot remember the user's consent: \(error)")
        }
    }

    // MARK: Identity

    /// The user the next event belongs to: the open session's, or the one an automatic session
    /// would continue (read from the previous run's state when nothing was recorded yet); nil
    /// when anonymous.
    public var userId: String? {
        precondition(!isLockedByCurrentThread, "EventRecorder.userId read from inside a consumer callback")
        return state.withLock { state in
            if let session = state.session { return session.session.userId }
            if !state.resumeChecked, let bytes = try? AtomicFile.read(layout.currentSessionPath),
                let saved = try? EventSession(jsonBytes: bytes)
            {
                return saved.userId
            }
            return state.identity.userId
        }
    }

    /// Starts over as a new anonymous user on this device: the open session ends, the user and
    /// metadata automatic sessions would continue are forgotten, and a new anonymous id is made
    /// (and kept across launches). What was recorded before keeps its ids, and is delivered
    /// under them. The next event starts a new anonymous session. Consumers hear of it
    /// (``EventConsumer/eventRecorder(_:didResetIdentity:)``, in log order): routing forgets the
    /// anonymous user's traits and has its adapters forget the user.
    /// - Returns: the new anonymous id.
    @discardableResult
    public func resetIdentity() -> String {
        precondition(!isLockedByCurrentThread, "EventRecorder.resetIdentity called from inside a consumer callback")
        let id = UUID().uuidString
        let file: MappedLogFile? = withStateLock { state in
            state.resumeChecked = true
            var file: MappedLogFile?
            if let current = state.session {
                flushPendingLocked(&state)
                file = current.openFile
                endLocked(current, at: configuration.clock.now(), &state)
            }
            forgetUserLocked(&state)
            state.anonymousId = id
            do {
                try AtomicFile.createDirectory(layout.statePath)
                try AtomicFile.write(Array(id.utf8), to: layout.installIDPath)
            } catch {
                logger.error("cannot keep the new install id: \(error); using \(id) for this run")
            }
            // Under the lock, between the previous user's last event and the next user's first.
            for consumer in state.consumers { consumer.eventRecorder(self, didResetIdentity: id) }
            return file
        }
        if let file { syncQuietly(file) }
        return id
    }
}
