import Foundation
import TouchpointCore

/// The dispatcher's decisions as a plain value: what to read, when to send, how to treat each
/// answer, when `dispatch()` calls are done. No I/O and no clock of its own, so every rule is
/// tested directly; ``EventDispatcher`` guards it with a lock and carries out its actions.
///
/// - One batch at a time: it is read, sent, retried until answered, then the cursor moves past it.
///   While it is in flight the next one may be read ahead (never sent before the first is answered).
/// - 2xx moves the cursor; 408/429/5xx, other statuses and network errors keep the batch and back
///   off (``Backoff``, honouring `Retry-After`): the whole pipeline pauses meanwhile.
/// - 413 splits the batch in halves (down to one event; a single event answered 413 is dropped);
///   any other 4xx drops that batch only. A compressed request answered 400 or 415 is sent once
///   more uncompressed, and compression stays off for this run.
/// - Interval `< 0`: sends only for `dispatch()`; `0`: sends whenever events are pending;
///   `> 0`: every interval, everything pending.
///
/// Where the pipeline is lives in one value, ``Phase``: no read, a read out, a batch held, its
/// upload out, or a stale read or upload to ignore after the log was cleared. The batch being
/// delivered, its attempts and the batch read ahead of it are data of the cases that have them,
/// so a combination such as "an upload out and no batch" cannot be written. What stays outside
/// the phase holds in every phase: the cursor, the backoff, the switches (enabled, online,
/// interval, compression), a pending 413 split, and the waiting `dispatch()` calls.
struct DispatchStateMachine: Sendable {
    /// The acknowledged position in the log.
    private(set) var cursor: DeliveryCursor
    /// Consecutive failures and the earliest next attempt.
    private(set) var backoff: Backoff
    private(set) var isEnabled: Bool
    /// Whether the user opted out of recording (the recorder keeps the choice): nothing is sent.
    private(set) var isOptedOut = false
    private(set) var interval: TimeInterval
    private(set) var isOnline = true
    /// Whether the last failure was a network error (no HTTP answer): only those are cut short
    /// when connectivity returns; a collector's `Retry-After` is always honoured.
    private(set) var lastFailureWasNetwork: Bool
    private(set) var statistics = DeliveryStatistics()
    private(set) var nextTimer: Date?
    /// Whether requests may be compressed (false after the collector refused one).
    private(set) var compressionAllowed: Bool
    let limits: BatchLimits

    /// What the pipeline is doing.
    private(set) var phase = Phase.idle

    private var rateLimiter: RequestRateLimiter?
    private var random: SeededRandomNumberGenerator
    private var dataAvailable = true
    private var signals = 0
    private var flushing = false
    private var split: Split?
    private var waiters: [Int: Waiter] = [:]
    private var readSequence = 0
    private var nextToken = 0

    /// Creates a machine, fresh or restored from the state file.
    /// - Parameters:
    ///   - saved: the persisted state, or nil for a new destination.
    ///   - interval: the dispatch interval.
    ///   - limits: batch limits.
    ///   - policy: the backoff policy.
    ///   - requestsPerMinute: the request ceiling, or nil for none.
    ///   - burst: requests allowed at once under the ceiling.
    ///   - compression: whether requests may be compressed.
    ///   - seed: the jitter seed.
    ///   - now: the current time.
    init(
        saved: DeliveryStateFile.Contents?,
        interval: TimeInterval,
        limits: BatchLimits,
        policy: Backoff.Policy,
        requestsPerMinute: Double?,
        burst: Int,
        compression: Bool,
        seed: UInt64,
        now: Date
    ) {
        let saved = saved ?? DeliveryStateFile.Contents()
        cursor = saved.cursor
        // A saved next attempt further away than any delay the policy can produce means the clock
        // moved back; do not wait longer than the policy allows.
        let longest = max(policy.maximumDelay, policy.maximumRetryAfter)
        let nextAttempt = saved.nextAttempt.map { min($0, now.addingTimeInterval(longest)) }
        backoff = Backoff(policy: policy, failures: saved.failures, nextAttempt: nextAttempt)
        lastFailureWasNetwork = saved.lastFailureWasNetwork
        isEnabled = saved.isEnabled
        self.interval = interval
        self.limits = limits
        rateLimiter = requestsPerMinute.map { RequestRateLimiter(requestsPerMinute: $0, burst: burst) }
        compressionAllowed = compression
        random = SeededRandomNumberGenerator(seed: seed)
        nextTimer = interval > 0 ? now.addingTimeInterval(interval) : nil
    }

    /// The state the file keeps.
    var persistentState: DeliveryStateFile.Contents {
        DeliveryStateFile.Contents(
            cursor: cursor, failures: backoff.failures, nextAttempt: backoff.nextAttempt,
            lastFailureWasNetwork: lastFailureWasNetwork, isEnabled: isEnabled)
    }

    /// Whether a read or an upload is under way.
    var isBusy: Bool {
        switch phase {
        case .idle, .holding: false
        case .reading, .uploading, .discarding: true
        }
    }

    /// Whether a batch is waiting to be acknowledged.
    var hasBatchInFlight: Bool {
        switch phase {
        case .holding, .uploading: true
        case .idle, .reading, .discarding: false
        }
    }

    /// How many `dispatch()` calls are waiting.
    var waiterCount: Int { waiters.count }

    // MARK: Deciding

    /// The next thing to do at `now`. Starting a read or a send marks it under way until its
    /// result is reported.
    mutating func nextAction(now: Date) -> Action {
        guard !isBusy else { return .wait(until: nil, reason: .busy) }
        guard isEnabled else { return .wait(until: nil, reason: .disabled) }
        guard !isOptedOut else { return .wait(until: nil, reason: .optedOut) }
        if interval > 0, let timer = nextTimer, now >= timer {
            flushing = true
            nextTimer = now.addingTimeInterval(interval)
        }
        let wanted = !waiters.isEmpty || flushing || (interval == 0 && (dataAvailable || hasBatchInFlight))
        guard wanted else {
            if interval > 0 { return .wait(until: nextTimer, reason: .timer) }
            return .wait(until: nil, reason: interval < 0 ? .manual : .nothingPending)
        }
        guard case .holding(var flight) = phase else {
            // Not busy and holding nothing: read the next batch.
            nextToken += 1
            readSequence += 1
            phase = .reading(PendingRead(token: nextToken, sequence: readSequence, signals: signals))
            var readLimits = limits
            if let split { readLimits.maximumEvents = min(readLimits.maximumEvents, split.maximumEvents) }
            return .read(ReadOrder(from: cursor, limits: readLimits, token: nextToken))
        }
        guard isOnline else { return .wait(until: nil, reason: .offline) }
        if !backoff.canAttempt(at: now) { return .wait(until: backoff.nextAttempt, reason: .backoff) }
        if var limiter = rateLimiter {
            let allowed = limiter.take(at: now)
            rateLimiter = limiter
            if !allowed { return .wait(until: limiter.nextToken(at: now), reason: .rateLimit) }
        }
        nextToken += 1
        flight.attempts += 1
        phase = .uploading(flight, token: nextToken)
        statistics.requests += 1
        return .send(
            SendOrder(
                batch: flight.batch, mayCompress: compressionAllowed && !flight.plainOnly,
                attempt: flight.attempts, token: nextToken))
    }

    /// While an upload is in flight: the read of the batch after it, if one is worth doing now.
    mutating func prefetchOrder() -> ReadOrder? {
        guard case .uploading(var flight, let upload) = phase, flight.readAhead == nil, split == nil, isEnabled,
            !isOptedOut
        else { return nil }
        nextToken += 1
        flight.readAhead = .reading(token: nextToken)
        phase = .uploading(flight, token: upload)
        return ReadOrder(from: flight.batch.end, limits: limits, token: nextToken)
    }

    /// A read ahead finished; the batch waits until the one in flight is answered.
    mutating func prefetchFinished(_ batch: OutboxBatch, token: Int) {
        guard case .uploading(var flight, let upload) = phase, flight.readAhead == .reading(token: token) else {
            return  // the batch in flight is gone (answered, split, or the log was cleared)
        }
        // Only a batch with messages is kept: anything else is read again in its turn.
        flight.readAhead = batch.count > 0 ? .ready(batch) : nil
        phase = .uploading(flight, token: upload)
    }

    // MARK: Inputs

    /// The recorder wrote an event (or started a session).
    /// - Returns: whether the dispatcher must be woken (it was waiting for data).
    mutating func newData() -> Bool {
        signals &+= 1
        guard !dataAvailable else { return false }
        dataAvailable = true
        return interval == 0 && isEnabled && !isOptedOut && !isBusy
    }

    /// A read finished.
    mutating func readFinished(_ batch: OutboxBatch, token: Int) -> Effects {
        var effects = Effects()
        guard case .reading(let read) = phase, read.token == token else {
            if phase == .discarding(token: token) { phase = .idle }  // the log was cleared meanwhile
            return effects
        }
        phase = .idle
        if batch.start == .start, cursor != .start {
            // The reader found the journal changed under the cursor and started over: the saved
            // position means nothing in the new journal, and retention must not take it as
            // "delivered up to here". Re-sending is safe; the collector drops duplicates.
            cursor = .start
            effects.persist = true
        }
        noteOversized(batch, &effects)
        if let reason = batch.readError { effects.notes.append(.readFailed(reason: reason)) }
        if batch.count > 0 {
            phase = .holding(InFlight(batch: batch))
            return effects
        }
        if batch.end != cursor {
            // Only oversized events, damaged lines or empty sessions: nothing to send, but the
            // cursor moves past them.
            cursor = batch.end
            effects.persist = true
            completeReachedWaiters(&effects)
        }
        guard batch.reachedEnd, batch.readError == nil else { return effects }
        // Caught up: everything recorded before this read began is acknowledged.
        dataAvailable = signals != read.signals
        flushing = false
        for (id, waiter) in waiters where waiter.readsBefore < read.sequence {
            complete(id, waiter, &effects)
        }
        return effects
    }

    /// An upload finished with `result`; `compressed` says whether its body was gzip.
    mutating func uploadFinished(_ result: UploadResult, compressed: Bool, token: Int, now: Date) -> Effects {
        var effects = Effects()
        guard case .uploading(var flight, let upload) = phase, upload == token else {
            if phase == .discarding(token: token) { phase = .idle }  // the log was cleared meanwhile
            return effects
        }
        // The batch is held again unless the answer settles it.
        phase = .holding(flight)
        switch result {
        case .cancelled:
            break
        case .accepted(let rejected):
            phase = .idle
            // Each rejected message once, and only indexes of this batch: a collector's answer
            // cannot make the counts negative.
            var seen = Set<Int>()
            let valid = rejected.filter {
                flight.batch.messageIds.indices.contains($0.index) && seen.insert($0.index).inserted
            }
            statistics.deliveredEvents += flight.batch.count - valid.count
            statistics.rejectedEvents += valid.count
            advance(to: flight.batch.end, readAhead: flight.readAhead, &effects)
            effects.notes.append(.delivered(count: flight.batch.count, attempt: flight.attempts))
            if !valid.isEmpty {
                effects.notes.append(
                    .rejectedByCollector(
                        messageIds: valid.map { flight.batch.messageIds[$0.index] }, reasons: valid.map(\.reason)))
            }
            succeeded(&effects)
        case .failed(let reason, let retryAfter, let network):
            let delay = backoff.recordFailure(at: now, retryAfter: retryAfter, using: &random)
            lastFailureWasNetwork = network
            statistics.failedRequests += 1
            effects.persist = true
            effects.notes.append(.retrying(delay: delay, failures: backoff.failures, reason: reason))
            let retryAt = Timestamp.format(now.addingTimeInterval(delay))
            failFastWaiters(
                DeliveryError(code: .collectorUnavailable, reason: "\(reason); next attempt at \(retryAt)"), &effects)
        case .tooLarge(let reason):
            phase = .idle
            if flight.batch.count > 1 {
                // The split re-reads from the batch's start; the batch read ahead is let go.
                let half = max(1, flight.batch.count / 2)
                let until = split.map { $0.until.hasReached(flight.batch.end) ? $0.until : flight.batch.end }
                split = Split(maximumEvents: half, until: until ?? flight.batch.end)
                effects.notes.append(.splitting(count: flight.batch.count, into: half))
            } else {
                drop(
                    flight.batch, reason: reason + " (a single event is too large for the collector)",
                    readAhead: flight.readAhead, &effects)
            }
            succeeded(&effects)
        case .refused(let status, let reason):
            if compressed, status == 400 || status == 415, compressionAllowed {
                compressionAllowed = false
                flight.plainOnly = true
                phase = .holding(flight)
                effects.notes.append(.compressionRefused(reason: reason))
            } else {
                phase = .idle
                drop(flight.batch, reason: reason, readAhead: flight.readAhead, &effects)
            }
            succeeded(&effects)
        }
        return effects
    }

    /// A `dispatch()` call: wait until the log up to `target` is acknowledged.
    mutating func addWaiter(_ id: Int, target: DeliveryCursor, failFast: Bool, now: Date) -> Effects {
        var effects = Effects()
        if !isEnabled {
            effects.failed.append(
                .init(waiter: id, error: DeliveryError(code: .disabled, reason: "delivery is disabled")))
            return effects
        }
        if isOptedOut {
            effects.failed.append(
                .init(waiter: id, error: DeliveryError(code: .optedOut, reason: "the user opted out of recording")))
            return effects
        }
        if failFast && !isOnline {
            effects.failed.append(
                .init(waiter: id, error: DeliveryError(code: .offline, reason: "the device is offline")))
            return effects
        }
        if failFast, let next = backoff.nextAttempt, next > now {
            let error = DeliveryError(
                code: .collectorUnavailable,
                reason:
                    "cooling down after \(backoff.failures) failed attempts; next attempt at \(Timestamp.format(next))")
            effects.failed.append(.init(waiter: id, error: error))
            return effects
        }
        let waiter = Waiter(
            target: target, readsBefore: readSequence, failFast: failFast,
            deliveredBefore: statistics.deliveredEvents, droppedBefore: statistics.droppedEvents)
        if cursor.hasReached(target) {
            complete(id, waiter, &effects)
        } else {
            waiters[id] = waiter
        }
        return effects
    }

    /// A `dispatch()` call gave up (timeout, cancellation).
    /// - Returns: whether it was still waiting.
    mutating func removeWaiter(_ id: Int) -> Bool { waiters.removeValue(forKey: id) != nil }

    /// ``EventDispatcher/enable()`` / ``EventDispatcher/disable()``.
    mutating func setEnabled(_ enabled: Bool, now: Date) -> Effects {
        var effects = Effects()
        guard enabled != isEnabled else { return effects }
        isEnabled = enabled
        effects.persist = true
        if enabled {
            nextTimer = interval > 0 ? now.addingTimeInterval(interval) : nil
        } else {
            let error = DeliveryError(code: .disabled, reason: "delivery was disabled while dispatch() waited")
            for id in waiters.keys.sorted() { effects.failed.append(.init(waiter: id, error: error)) }
            waiters.removeAll()
            flushing = false
        }
        return effects
    }

    /// The user opted out of recording, or back in: while out, nothing is sent and waiting
    /// `dispatch()` calls fail (the choice is the recorder's to keep; nothing is persisted here).
    mutating func setOptedOut(_ optedOut: Bool, now: Date) -> Effects {
        var effects = Effects()
        guard optedOut != isOptedOut else { return effects }
        isOptedOut = optedOut
        if optedOut {
            let error = DeliveryError(code: .optedOut, reason: "the user opted out while dispatch() waited")
            for id in waiters.keys.sorted() { effects.failed.append(.init(waiter: id, error: error)) }
            waiters.removeAll()
            flushing = false
        } else {
            nextTimer = interval > 0 ? now.addingTimeInterval(interval) : nil
            dataAvailable = true  // what was kept meanwhile is sent now
        }
        return effects
    }

    /// A new dispatch interval.
    mutating func setInterval(_ newInterval: TimeInterval, now: Date) {
        interval = newInterval.isFinite ? newInterval : -1
        nextTimer = interval > 0 ? now.addingTimeInterval(interval) : nil
    }

    /// The app went to the background: send what is pending now (unless dispatch is manual).
    mutating func flushRequested() {
        if interval >= 0 { flushing = true }
    }

    /// The reachability monitor's news.
    ///
    /// Only a change from offline to online cuts a backoff short: a monitor's first report at
    /// launch is not news, and must not undo the persisted backoff.
    mutating func setOnline(_ online: Bool, now: Date) -> Effects {
        var effects = Effects()
        let cameBack = online && !isOnline
        isOnline = online
        if !online {
            failFastWaiters(DeliveryError(code: .offline, reason: "the device went offline"), &effects)
        } else if cameBack, lastFailureWasNetwork, let next = backoff.nextAttempt, next > now {
            // Retry at once: the failures were the network's, and the network is back.
            backoff = Backoff(policy: backoff.policy, failures: backoff.failures, nextAttempt: nil)
            effects.persist = true
            effects.notes.append(.backOnline)
        }
        return effects
    }

    /// The recorder deleted the whole log (``EventRecorder/clear()``): start over at its start.
    /// What was pending is gone, so waiting `dispatch()` calls complete.
    mutating func cleared() -> Effects {
        var effects = Effects()
        switch phase {
        case .reading(let read): phase = .discarding(token: read.token)
        case .uploading(_, let upload): phase = .discarding(token: upload)
        case .idle, .holding: phase = .idle
        case .discarding: break
        }
        cursor = .start
        split = nil
        dataAvailable = true
        effects.persist = true
        for (id, waiter) in waiters.sorted(by: { $0.key < $1.key }) { complete(id, waiter, &effects) }
        return effects
    }

    // MARK: Helpers

    /// The batch that ended at `end` is settled (delivered or dropped); the phase is idle.
    /// The batch read ahead of it becomes the one in flight when it starts where the cursor now is.
    private mutating func advance(to end: DeliveryCursor, readAhead: ReadAhead?, _ effects: inout Effects) {
        cursor = end
        effects.persist = true
        if let current = split, cursor.hasReached(current.until) { split = nil }
        completeReachedWaiters(&effects)
        guard case .ready(let next) = readAhead, phase == .idle, split == nil, next.start == cursor else { return }
        noteOversized(next, &effects)
        phase = .holding(InFlight(batch: next))
    }

    private mutating func noteOversized(_ batch: OutboxBatch, _ effects: inout Effects) {
        for message in batch.oversized {
            effects.notes.append(
                .droppedOversized(messageId: message.messageId, bytes: message.bytes, limit: limits.maximumEventBytes))
        }
        statistics.droppedEvents += batch.oversized.count
    }

    private mutating func drop(
        _ batch: OutboxBatch, reason: String, readAhead: ReadAhead?, _ effects: inout Effects
    ) {
        statistics.droppedEvents += batch.count
        effects.notes.append(
            .dropped(count: batch.count, first: batch.messageIds.first, last: batch.messageIds.last, reason: reason))
        advance(to: batch.end, readAhead: readAhead, &effects)
    }

    /// The collector answered (whatever it said): the failure streak is over.
    private mutating func succeeded(_ effects: inout Effects) {
        guard backoff.failures > 0 || backoff.nextAttempt != nil || lastFailureWasNetwork else { return }
        backoff.recordSuccess()
        lastFailureWasNetwork = false
        effects.persist = true
    }

    private mutating func completeReachedWaiters(_ effects: inout Effects) {
        for (id, waiter) in waiters where cursor.hasReached(waiter.target) {
            complete(id, waiter, &effects)
        }
    }

    private mutating func complete(_ id: Int, _ waiter: Waiter, _ effects: inout Effects) {
        waiters.removeValue(forKey: id)
        effects.completed.append(
            .init(
                waiter: id,
                report: DispatchReport(
                    deliveredEvents: statistics.deliveredEvents - waiter.deliveredBefore,
                    droppedEvents: statistics.droppedEvents - waiter.droppedBefore)))
    }

    private mutating func failFastWaiters(_ error: DeliveryError, _ effects: inout Effects) {
        for (id, waiter) in waiters.sorted(by: { $0.key < $1.key }) where waiter.failFast {
            waiters.removeValue(forKey: id)
            effects.failed.append(.init(waiter: id, error: error))
        }
    }
}
