import Foundation
import Logging
import TouchpointCore
import TouchpointEvents

/// Delivers the local log to a collector: batches, gzip, retries with backoff, rate limiting,
/// and a persisted cursor so that nothing `record` accepted is lost before the collector has
/// acknowledged it.
///
/// ```swift
/// let dispatcher = EventDispatcher.start(writeKey: "wk_live_…", endpoint: collectorURL)
/// await EventDispatcher.track("checkout", distinctId: "user-42", properties: ["amount": 120])
/// await EventDispatcher.updateTraits(distinctId: "user-42", traits: ["plan": "pro"])
/// EventDispatcher.setDispatchInterval(120)          // every two minutes
/// try await EventDispatcher.dispatch(timeout: 30)   // or now, and wait for the acknowledgement
/// ```
///
/// **The log is the outbox.** Events are not copied into a queue: the dispatcher reads the
/// recorder's `events.jsonl` files in session-journal order from a cursor (journal entry and byte
/// offset) that marks what the collector acknowledged, saved under
/// `<recorder.directory>/state/delivery/<destination id>.json`. Start-up reads that file only, never
/// the history. Every event recorded by any part of the app (routing, surveys, promotion) is
/// delivered; sessions not yet delivered are kept from retention. ``EventRecorder/clear()`` resets
/// the cursor.
///
/// **When.** ``dispatchInterval`` as in the seed: `< 0` only on ``dispatch(timeout:failFast:)``;
/// `0` as soon as events are recorded; `> 0` every that many seconds. With an interval of 0 or
/// more, pending events are also sent when the app goes to the background
/// (``attach(lifecycle:)``).
///
/// **Failures.** One request in flight at a time. 2xx moves the cursor; 401 and 403 (a refused
/// write key: no batch is to blame), 408, 429, 5xx and network errors keep the batch and pause
/// all uploads for a ``Backoff`` delay (exponential, full jitter, capped, at least `Retry-After`),
/// persisted so a relaunch does not start hammering again; when a ``ReachabilityMonitor`` reports
/// the network back, a backoff caused by network errors ends at once.
/// 413 splits the batch in halves down to one event (a single event answered 413 is dropped);
/// any other 4xx drops that batch only. Every drop is logged with its message ids.
///
/// **Consent.** While the user opted out (``EventRecorder/optOut(discardingPending:)``, kept by
/// the recorder), nothing is sent and ``dispatch(timeout:failFast:)`` fails with
/// ``DeliveryError/Code/optedOut``; what was kept is sent after ``EventRecorder/optIn()``.
///
/// **Enable / disable.** ``disable()`` stops both: ``track(_:distinctId:properties:)`` and
/// ``updateTraits(distinctId:traits:)`` record nothing and return nil, and nothing is sent (an
/// upload already in flight finishes). Events that other parts of the app record into the log
/// meanwhile stay in it and are sent after ``enable()``. The state is persisted: a dispatcher
/// started later for the same destination starts disabled until ``enable()``.
///
/// **Debug mode.** ``setDebugMode(_:)`` lowers this dispatcher's log level to `debug`, which
/// shows what is sent (events, bytes before and after gzip, attempt, `sentAt`), what the collector
/// answered and how long it took, where the cursor moved, and why delivery waits (disabled,
/// nothing pending, timer, manual mode, offline, backoff with its end, rate limit). Without it
/// only notices (a batch split after a 413), warnings (a failure streak starting, messages the
/// collector rejected, a collector refusing gzip, the session journal changed under the cursor)
/// and errors (dropped events, unreadable files) are logged. Everything goes through swift-log, label `touchpoint.delivery`.
public final class EventDispatcher: Sendable {
    /// Where events go.
    public let destination: DeliveryDestination
    /// The recorder whose log is delivered.
    public let recorder: EventRecorder
    /// The configuration the dispatcher was created with (see ``dispatchInterval`` and
    /// ``isDebugMode`` for the values in effect).
    public let configuration: DeliveryConfiguration

    let transport: any HTTPTransport
    let clock: any WallClock
    let reader: OutboxReader
    let stateFile: DeliveryStateFile
    let inner: Locked<Inner>
    let wake = WakeSignal()
    let persistLock = Locked(())
    /// Where the blocking work runs: reading the log (and encoding its messages)…
    let workQueue = DispatchQueue(label: "touchpoint.delivery.work", qos: .utility)
    /// …and stamping and compressing request bodies, beside the read of the next batch.
    let bodyQueue = DispatchQueue(label: "touchpoint.delivery.body", qos: .utility)

    struct Inner {
        var machine: DispatchStateMachine
        var logger: Logger
        var isDebugMode: Bool
        var continuations: [Int: CheckedContinuation<DispatchReport, any Error>] = [:]
        var lastWaiterID = 0
        var loop: Task<Void, Never>?
        var observations: [AnyObject] = []
        var lastWait: DispatchStateMachine.WaitReason?
        /// How many times ``poke()`` was called.
        var pokes = 0
        /// The pokes the loop had seen when it last decided to wait.
        var settledAfterPokes = 0
        var statusStreams: [Int: AsyncStream<DeliveryStatus>.Continuation] = [:]
        var lastStreamID = 0
        var isShutDown = false
        var consumer: DeliveryConsumer?
    }

    /// Creates a dispatcher for `destination` and starts it.
    ///
    /// Reads only the destination's state file; registers with the recorder to hear about new
    /// events; attaches ``DeliveryConfiguration/reachability``.
    /// - Parameters:
    ///   - destination: the collector and write key.
    ///   - recorder: the recorder whose log is delivered (``EventRecorder/shared`` by default).
    ///   - configuration: interval, limits, compression, retry, rate limit, debug mode.
    ///   - transport: how requests are sent.
    public init(
        destination: DeliveryDestination,
        recorder: EventRecorder = .shared,
        configuration: DeliveryConfiguration = DeliveryConfiguration(),
        transport: any HTTPTransport = URLSessionTransport()
    ) {
        self.destination = destination
        self.recorder = recorder
        self.configuration = configuration
        self.transport = transport
        clock = configuration.clock
        var logger = configuration.logger
        logger[metadataKey: "destination"] = "\(destination.batchURL.absoluteString)"
        reader = OutboxReader(
            directory: recorder.directory, library: configuration.library, context: configuration.context,
            logger: logger)
        stateFile = DeliveryStateFile(directory: recorder.directory, destination: destination)
        var saved: DeliveryStateFile.Contents?
        do {
            saved = try stateFile.read()
        } catch {
            logger.error("\(error); delivering again from the start of the log (the collector drops duplicates)")
            if let enabled = stateFile.enabledFlag() {
                var contents = DeliveryStateFile.Contents()
                contents.isEnabled = enabled
                saved = contents
            }
        }
        if configuration.isDebugMode { logger.logLevel = .debug }
        let machine = DispatchStateMachine(
            saved: saved,
            interval: configuration.dispatchInterval,
            limits: configuration.batchLimits,
            policy: configuration.backoff,
            requestsPerMinute: configuration.maximumRequestsPerMinute,
            burst: configuration.requestBurst,
            compression: configuration.gzipThreshold != nil,
            seed: configuration.jitterSeed ?? UInt64.random(in: 0...UInt64.max),
            now: configuration.clock.now())
        inner = Locked(Inner(machine: machine, logger: logger, isDebugMode: configuration.isDebugMode))
        let consumer = DeliveryConsumer(dispatcher: self)
        inner.withLock { $0.consumer = consumer }
        recorder.addConsumer(consumer)
        // Registered first, so a change of consent from now on reaches the machine.
        if recorder.isOptedOut { _ = inner.withLock { $0.machine.setOptedOut(true, now: configuration.clock.now()) } }
        if let saved {
            logger.debug("resuming at \(saved.cursor) after \(saved.failures) failures")
        }
        if let reachability = configuration.reachability { attach(reachability: reachability) }
        let wake = self.wake
        let loop = Task.detached { [weak self] in
            while !Task.isCancelled {
                // The loop holds the dispatcher only during a step, never while it waits.
                guard let step = await self?.step() else { return }
                if case .wait(let seconds) = step { await wake.wait(seconds: seconds) }
            }
        }
        inner.withLock { $0.loop = loop }
    }

    /// Creates a dispatcher for the collector at `endpoint` and starts it.
    /// - Parameters:
    ///   - writeKey: the source's write key.
    ///   - endpoint: the collector's base URL (or its `/v1/batch` URL).
    ///   - recorder: the recorder whose log is delivered.
    ///   - configuration: interval, limits, compression, retry, rate limit, debug mode.
    ///   - transport: how requests are sent.
    public convenience init(
        writeKey: String,
        endpoint: URL,
        recorder: EventRecorder = .shared,
        configuration: DeliveryConfiguration = DeliveryConfiguration(),
        transport: any HTTPTransport = URLSessionTransport()
    ) {
        self.init(
            destination: DeliveryDestination(endpoint: endpoint, writeKey: writeKey), recorder: recorder,
            configuration: configuration, transport: transport)
    }

    deinit {
        let (loop, continuations, consumer, streams) = inner.withLock { inner in
            defer {
                inner.continuations.removeAll()
                inner.statusStreams.removeAll()
            }
            return (inner.loop, inner.continuations, inner.consumer, inner.statusStreams)
        }
        if let consumer { recorder.removeConsumer(consumer) }
        loop?.cancel()
        // Outside the lock: finishing a stream runs its termination handler, which takes the lock.
        for stream in streams.values { stream.finish() }
        for continuation in continuations.values {
            continuation.resume(throwing: DeliveryError(code: .shutDown, reason: "the dispatcher was released"))
        }
    }

    // MARK: Recording (the seed's API)

    /// Records an event for a user: `trackEvent:distinctId:properties:` of the seed.
    ///
    /// The event goes into the log (and from there to the collector, and to every other consumer).
    /// When `distinctId` differs from the current session's user, a session for that user starts.
    /// - Parameters:
    ///   - name: the event's name.
    ///   - distinctId: the user's id; nil keeps the current session's user.
    ///   - properties: the event's properties.
    /// - Returns: the recorded event, or nil when delivery is disabled or the recorder rejected it
    ///   (larger than 32 KB; logged by the recorder).
    @discardableResult
    public func track(
        _ name: String, distinctId: String? = nil, properties: [String: EventValue] = [:]
    ) async -> Event? {
        guard isEnabled else {
            logger.debug("disabled: not recording \"\(name)\"")
            return nil
        }
        guard let distinctId else { return recorder.record(name, properties: properties) }
        return recorder.record(name, properties: properties, userID: distinctId)
    }

    /// Records new or changed traits of a user as an `identify` event:
    /// `updateTraitsWithDistinctId:properties:` of the seed.
    /// - Parameters:
    ///   - distinctId: the user's id.
    ///   - traits: the traits to set.
    /// - Returns: the recorded event, or nil when delivery is disabled or the recorder rejected it.
    @discardableResult
    public func updateTraits(distinctId: String, traits: [String: EventValue]) async -> Event? {
        guard isEnabled else {
            logger.debug("disabled: not recording traits of \(distinctId)")
            return nil
        }
        return recorder.record("identify", properties: traits, type: .identify, userID: distinctId)
    }

    // MARK: Settings

    /// Whether events are recorded through this dispatcher and sent.
    public var isEnabled: Bool { inner.withLock { $0.machine.isEnabled } }

    /// Turns delivery on: the dispatcher records again and sends what is pending (persisted).
    public func enable() { setEnabled(true) }

    /// Turns delivery off: nothing is recorded through this dispatcher and nothing is sent;
    /// waiting ``dispatch(timeout:failFast:)`` calls fail with ``DeliveryError/Code/disabled``
    /// (persisted).
    public func disable() { setEnabled(false) }

    private func setEnabled(_ enabled: Bool) {
        let effects = inner.withLock { $0.machine.setEnabled(enabled, now: clock.now()) }
        logger.debug(enabled ? "delivery enabled" : "delivery disabled")
        apply(effects)
        wake.signal()
    }

    /// Whether debug logging is on.
    public var isDebugMode: Bool { inner.withLock { $0.isDebugMode } }

    /// Turns debug logging on or off (see the type's overview for what it logs).
    public func setDebugMode(_ on: Bool) {
        inner.withLock { inner in
            inner.isDebugMode = on
            inner.logger.logLevel = on ? .debug : configuration.logger.logLevel
        }
    }

    /// The dispatch interval in effect: `< 0` manual, `0` immediate, `> 0` every that many seconds.
    public var dispatchInterval: TimeInterval { inner.withLock { $0.machine.interval } }

    /// Changes the dispatch interval; a positive interval's first tick is that long from now.
    public func setDispatchInterval(_ interval: TimeInterval) {
        inner.withLock { $0.machine.setInterval(interval, now: clock.now()) }
        wake.signal()
    }

    // MARK: Dispatching

    /// Sends what is pending now and returns when the collector has acknowledged everything that
    /// was recorded before the call (events recorded meanwhile may be included).
    ///
    /// Works with every dispatch interval (it is the only way to send when the interval is
    /// negative). Respects the backoff, the rate limit and reachability: it waits them out unless
    /// `failFast` is set. Batches the collector refuses (4xx other than 401, 403, 408, 413 and
    /// 429) are dropped and counted in the report, not thrown.
    /// - Parameters:
    ///   - timeout: the most seconds to wait; nil waits until done (cancel the task to stop).
    ///   - failFast: throw at the first failed attempt (or at once while backing off or offline)
    ///     instead of waiting through retries.
    /// - Returns: how many events were acknowledged and dropped while waiting.
    /// - Throws: ``DeliveryError``: `disabled`, `timedOut`, `cancelled`, `collectorUnavailable` and
    ///   `offline` (with `failFast`), `shutDown`. The events stay pending in every case.
    @discardableResult
    public func dispatch(timeout: TimeInterval? = nil, failFast: Bool = false) async throws -> DispatchReport {
        let cursor = inner.withLock { $0.machine.cursor }
        // Reading the journal to its end is file I/O: on the work queue, not a concurrency thread.
        let target = await onWorkQueue { [reader] in reader.end(from: cursor) }
        let id = inner.withLock { inner in
            inner.lastWaiterID += 1
            return inner.lastWaiterID
        }
        if let timeout {
            DispatchQueue.global().asyncAfter(deadline: .now() + max(0, timeout)) { [weak self] in
                self?.abandon(
                    id, DeliveryError(code: .timedOut, reason: "not all events were acknowledged within \(timeout) s"))
            }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                // Registration and the cancellation check under one lock: a cancellation that
                // came before the wait (onCancel found nothing to end) still ends it.
                let registration: Result<DispatchStateMachine.Effects, DeliveryError> = inner.withLock { inner in
                    guard !inner.isShutDown else {
                        return .failure(DeliveryError(code: .shutDown, reason: "the dispatcher is shut down"))
                    }
                    guard !Task.isCancelled else {
                        return .failure(
                            DeliveryError(code: .cancelled, reason: "the task waiting in dispatch() was cancelled"))
                    }
                    inner.continuations[id] = continuation
                    return .success(
                        inner.machine.addWaiter(id, target: target, failFast: failFast, now: clock.now()))
                }
                let effects: DispatchStateMachine.Effects
                switch registration {
                case .success(let registered): effects = registered
                case .failure(let error):
                    continuation.resume(throwing: error)
                    return
                }
                logger.debug("dispatch() waits for the log up to \(target)")
                apply(effects)
                wake.signal()
            }
        } onCancel: {
            abandon(id, DeliveryError(code: .cancelled, reason: "the task waiting in dispatch() was cancelled"))
        }
    }

    /// Ends a waiting dispatch call with `error`, if it is still waiting.
    private func abandon(_ id: Int, _ error: DeliveryError) {
        let continuation = inner.withLock { inner -> CheckedContinuation<DispatchReport, any Error>? in
            _ = inner.machine.removeWaiter(id)
            return inner.continuations.removeValue(forKey: id)
        }
        continuation?.resume(throwing: error)
    }

    // MARK: Lifecycle and reachability

    /// Sends what is pending when the app goes to the background or terminates (unless the
    /// interval is negative). The dispatcher keeps observing for as long as it lives.
    public func attach(lifecycle: any AppLifecycle) {
        let observation = lifecycle.observe { [weak self] event in
            guard let self, event == .didEnterBackground || event == .willTerminate else { return }
            self.inner.withLock { $0.machine.flushRequested() }
            self.logger.debug("the app went to the background: sending what is pending")
            self.wake.signal()
        }
        inner.withLock { $0.observations.append(observation) }
    }

    /// Follows `monitor`: uploads pause while offline, and a backoff caused by network errors ends
    /// as soon as the network is back.
    public func attach(reachability monitor: any ReachabilityMonitor) {
        let observation = monitor.observe { [weak self] status in
            guard let self else { return }
            let effects = self.inner.withLock { $0.machine.setOnline(status == .online, now: self.clock.now()) }
            self.logger.debug("reachability: \(status == .online ? "online" : "offline")")
            self.apply(effects)
            self.wake.signal()
        }
        inner.withLock { $0.observations.append(observation) }
    }

    // MARK: Observing

    /// The dispatcher's state now.
    public var status: DeliveryStatus { inner.withLock { Self.status(of: $0.machine) } }

    /// A stream of statuses, one after each change (a slow reader gets the newest).
    public func statusUpdates() -> AsyncStream<DeliveryStatus> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: DeliveryStatus.self, bufferingPolicy: .bufferingNewest(1))
        let id = inner.withLock { inner in
            inner.lastStreamID += 1
            inner.statusStreams[inner.lastStreamID] = continuation
            continuation.yield(Self.status(of: inner.machine))
            return inner.lastStreamID
        }
        let inner = self.inner
        continuation.onTermination = { _ in inner.withLock { _ = $0.statusStreams.removeValue(forKey: id) } }
        return stream
    }

    /// How much of the log is not yet acknowledged, in bytes of event lines (reads the journal
    /// from the cursor and the sizes of the pending sessions' files).
    public func backlog() -> DeliveryBacklog {
        reader.backlog(from: inner.withLock { $0.machine.cursor })
    }

    /// Stops the dispatcher: cancels an upload in flight (it will be sent again later), fails
    /// waiting dispatch calls with ``DeliveryError/Code/shutDown``, stops following the recorder,
    /// and returns when the loop has ended. The state file keeps the cursor.
    public func shutdown() async {
        let (loop, continuations, consumer, streams, observations) = inner.withLock { inner in
            inner.isShutDown = true
            defer {
                inner.continuations.removeAll()
                inner.statusStreams.removeAll()
                inner.observations.removeAll()
            }
            return (inner.loop, inner.continuations, inner.consumer, inner.statusStreams, inner.observations)
        }
        _ = observations  // released here, outside the lock: they stop lifecycle and reachability calls
        if let consumer { recorder.removeConsumer(consumer) }
        loop?.cancel()
        for stream in streams.values { stream.finish() }
        await loop?.value
        for continuation in continuations.values {
            continuation.resume(throwing: DeliveryError(code: .shutDown, reason: "the dispatcher was shut down"))
        }
    }

    static func status(of machine: DispatchStateMachine) -> DeliveryStatus {
        DeliveryStatus(
            isEnabled: machine.isEnabled, isOnline: machine.isOnline, dispatchInterval: machine.interval,
            cursor: machine.cursor, statistics: machine.statistics, consecutiveFailures: machine.backoff.failures,
            nextAttempt: machine.backoff.nextAttempt, hasBatchInFlight: machine.hasBatchInFlight,
            waitingDispatches: machine.waiterCount)
    }

    /// The logger with the level debug mode sets.
    var logger: Logger { inner.withLock { $0.logger } }
}
