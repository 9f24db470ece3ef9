import Foundation
import Logging
import TouchpointCore
import TouchpointEvents

extension EventDispatcher {
    /// What the loop does after a step.
    enum LoopStep {
        /// Take the next step at once.
        case next
        /// Wait for a signal, or at most this many seconds (nil: no limit).
        case wait(Double?)
    }

    /// Carries out the machine's next action: one read, one upload, or a decision to wait.
    func step() async -> LoopStep {
        let (action, pokesSeen) = inner.withLock { inner in
            // The clock is read under the lock that counts pokes, so a decision that counts a poke
            // saw the clock as it was when the poke came (see `settled`).
            let action = inner.machine.nextAction(now: clock.now())
            // After an upload, say again why delivery waits, even for the same reason as before.
            if case .send = action { inner.lastWait = nil }
            return (action, inner.pokes)
        }
        switch action {
        case .read(let order):
            let batch = await read(order)
            apply(inner.withLock { $0.machine.readFinished(batch, token: order.token) })
            return .next
        case .send(let order):
            // While the collector works on this batch, read the next one.
            let prefetch = inner.withLock { $0.machine.prefetchOrder() }
            async let answer = upload(order)
            if let prefetch {
                let batch = await read(prefetch)
                inner.withLock { $0.machine.prefetchFinished(batch, token: prefetch.token) }
            }
            let (result, compressed) = await answer
            apply(
                inner.withLock {
                    $0.machine.uploadFinished(result, compressed: compressed, token: order.token, now: clock.now())
                })
            return .next
        case .wait(let until, let reason):
            noteWait(reason, until: until, pokesSeen: pokesSeen)
            // Sleep at most a minute at a time, so a wall-clock change is noticed.
            return .wait(until.map { min(max(0, $0.timeIntervalSince(clock.now())), 60) })
        }
    }

    /// Reads a batch on the dispatcher's work queue: file reads block, and must not hold one of
    /// the few threads Swift concurrency shares with the app.
    func read(_ order: DispatchStateMachine.ReadOrder) async -> OutboxBatch {
        await onWorkQueue { [reader] in reader.read(from: order.from, limits: order.limits) }
    }

    /// Runs `work` on `queue` (the work queue by default).
    func onWorkQueue<Result: Sendable>(
        _ queue: DispatchQueue? = nil, _ work: @escaping @Sendable () -> Result
    ) async -> Result {
        await withCheckedContinuation { continuation in
            (queue ?? workQueue).async { continuation.resume(returning: work()) }
        }
    }

    /// A request body stamped `sentAt`, gzipped when that helps.
    struct PreparedBody: Sendable {
        var bytes: [UInt8]
        var plainSize: Int
        var compressed: Bool
        var failure: String?
    }

    /// Sends one batch, stamping `sentAt` now and compressing when it helps.
    func upload(_ order: DispatchStateMachine.SendOrder) async -> (UploadResult, compressed: Bool) {
        let sentAt = clock.now()
        let threshold = order.mayCompress ? configuration.gzipThreshold : nil
        let level = configuration.gzipLevel
        // On its own queue, so compressing this batch overlaps with reading the next one.
        let prepared = await onWorkQueue(bodyQueue) {
            let plain = BatchEnvelope.body(messages: order.batch.messages, sentAt: sentAt)
            var prepared = PreparedBody(bytes: plain, plainSize: plain.count, compressed: false)
            guard let threshold, plain.count >= threshold else { return prepared }
            do {
                let packed = try Gzip.compress(plain, level: level)
                if packed.count < plain.count {
                    prepared.bytes = packed
                    prepared.compressed = true
                }
            } catch {
                prepared.failure = "\(error)"
            }
            return prepared
        }
        var headers: TransportHeaders = [
            "Content-Type": "application/json",
            "Authorization": destination.authorization,
            "User-Agent": "\(configuration.library.name)/\(configuration.library.version)",
            // Reuse the connection. Without this header URLSessionTransport sends `Connection: close`
            // on Linux, and FoundationNetworking (Swift 6.3) then spins a core for as long as it
            // waits for the answer. The case that header guards against (a request resent on a dead
            // kept-alive connection without its body) ends in a timeout here, which is a failed
            // attempt like any other: retried with backoff, deduplicated by the collector.
            "Connection": "keep-alive",
        ]
        if prepared.compressed { headers["Content-Encoding"] = "gzip" }
        let body = prepared.bytes
        let plainSize = prepared.plainSize
        let compressed = prepared.compressed
        if let failure = prepared.failure {
            logger.warning("cannot gzip a request body, sending it uncompressed: \(failure)")
        }
        let logger = self.logger
        logger.debug(
            "sending \(order.batch.count) events, \(plainSize) bytes\(compressed ? " (\(body.count) gzipped)" : ""), attempt \(order.attempt), sentAt \(Timestamp.format(sentAt))"
        )
        let request = TransportRequest(
            method: .post, url: destination.batchURL, headers: headers, body: body,
            timeout: configuration.requestTimeout)
        let started = clock.now()
        let result: UploadResult
        do {
            let response = try await transport.send(request)
            result = UploadResult.classify(response, now: clock.now())
            logger.debug(
                "the collector answered \(response.status) after \(Self.milliseconds(since: started, clock)) ms")
        } catch {
            result = UploadResult.classify(error, url: destination.batchURL)
            logger.debug("no answer after \(Self.milliseconds(since: started, clock)) ms: \(error)")
        }
        return (result, compressed)
    }

    /// Writes the state file, logs the notes, ends dispatch calls, publishes the status.
    func apply(_ effects: DispatchStateMachine.Effects) {
        if effects.persist { persist() }
        let (logger, continuations, failures, status, streams) = inner.withLock { inner in
            let completed = effects.completed.compactMap { done in
                inner.continuations.removeValue(forKey: done.waiter).map { ($0, done.report) }
            }
            let failed = effects.failed.compactMap { failure in
                inner.continuations.removeValue(forKey: failure.waiter).map { ($0, failure.error) }
            }
            return (inner.logger, completed, failed, Self.status(of: inner.machine), Array(inner.statusStreams.values))
        }
        for note in effects.notes { log(note, logger) }
        for (continuation, report) in continuations { continuation.resume(returning: report) }
        for (continuation, error) in failures { continuation.resume(throwing: error) }
        for stream in streams { stream.yield(status) }
    }

    /// Writes the state file; serialized, so the last state always wins.
    func persist() {
        persistLock.withLock { _ in
            let contents = inner.withLock { $0.machine.persistentState }
            do {
                try stateFile.write(contents)
            } catch {
                logger.error("cannot save the delivery state: \(error)")
            }
        }
    }

    private func log(_ note: DispatchStateMachine.Note, _ logger: Logger) {
        switch note {
        case .delivered(let count, let attempt):
            logger.debug(
                "acknowledged \(count) events\(attempt > 1 ? " after \(attempt) attempts" : ""); cursor at \(status.cursor)"
            )
        case .rejectedByCollector(let ids, let reasons):
            let list = zip(ids, reasons).prefix(10).map { "\($0.uuidString): \($1)" }.joined(separator: "; ")
            logger.warning("the collector rejected \(ids.count) events: \(list)\(ids.count > 10 ? "; …" : "")")
        case .dropped(let count, let first, let last, let reason):
            let range = [first, last].compactMap { $0?.uuidString }.joined(separator: " … ")
            logger.error("dropped \(count) events (\(range)): \(reason)")
        case .droppedOversized(let id, let bytes, let limit):
            logger.error("dropped event \(id.uuidString): its message is \(bytes) bytes, over the limit of \(limit)")
        case .splitting(let count, let half):
            logger.notice("the collector answered 413 to \(count) events; sending them in batches of \(half)")
        case .retrying(let delay, let failures, let reason):
            let message: Logger.Message =
                "attempt failed (\(failures) in a row): \(reason); retrying in \(String(format: "%.1f", delay)) s"
            logger.log(level: failures == 1 ? .warning : .debug, message)
        case .compressionRefused(let reason):
            logger.warning("the collector refused a gzipped request (\(reason)); sending uncompressed from now on")
        case .readFailed(let reason):
            logger.error("cannot read the local log: \(reason)")
        case .backOnline:
            logger.debug("the network is back: retrying now")
        }
    }

    /// Logs why delivery waits, once per change of reason.
    private func noteWait(_ reason: DispatchStateMachine.WaitReason, until: Date?, pokesSeen: Int) {
        let (changed, logger) = inner.withLock { inner in
            defer {
                inner.lastWait = reason
                inner.settledAfterPokes = max(inner.settledAfterPokes, pokesSeen)
            }
            return (inner.lastWait != reason, inner.logger)
        }
        guard changed, reason != .busy else { return }
        if let until {
            logger.debug("waiting: \(reason.rawValue), until \(Timestamp.format(until))")
        } else {
            logger.debug("waiting: \(reason.rawValue)")
        }
    }

    // MARK: From the recorder

    func noteNewData() {
        if inner.withLock({ $0.machine.newData() }) { wake.signal() }
    }

    func noteConsent(isOptedOut: Bool) {
        let effects = inner.withLock { $0.machine.setOptedOut(isOptedOut, now: clock.now()) }
        logger.debug(isOptedOut ? "the user opted out: nothing is sent" : "the user opted in: sending again")
        apply(effects)
        wake.signal()
    }

    func noteCleared() {
        let effects = inner.withLock { $0.machine.cleared() }
        logger.debug("the log was cleared: delivering from its start")
        apply(effects)
        wake.signal()
    }

    /// Whether every event of `session` has been acknowledged (retention may delete it).
    func hasDelivered(_ session: SessionJournal.Entry) -> Bool {
        inner.withLock { $0.machine.cursor.journalOffset > session.offset }
    }

    /// Wakes the loop to look at the clock again (tests that move a manual clock).
    /// - Returns: this poke's number, for ``settled``.
    @discardableResult
    func poke() -> Int {
        let number = inner.withLock { inner in
            inner.pokes += 1
            return inner.pokes
        }
        wake.signal()
        return number
    }

    /// The last poke the loop had seen when it last decided to wait, and why it waits. Once
    /// `afterPoke` reaches a poke's number, the loop has looked at the clock and the log after that
    /// poke and sent everything it was going to send: a test checks then that nothing else was
    /// sent, instead of napping and hoping the loop was quick.
    var settled: (afterPoke: Int, reason: DispatchStateMachine.WaitReason?) {
        inner.withLock { ($0.settledAfterPokes, $0.lastWait) }
    }

    private static func milliseconds(since start: Date, _ clock: any WallClock) -> Int {
        Int((clock.now().timeIntervalSince(start) * 1000).rounded())
    }
}
