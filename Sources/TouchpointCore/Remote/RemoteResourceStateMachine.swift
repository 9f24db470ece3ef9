import Foundation

/// The refresh logic of ``RemoteResource`` as a plain value: which request to make (if any)
/// for a refresh at a given time, and what each answer does to the value, the error and the
/// cool-down. No I/O: the resource performs the requests and cache writes it asks for.
struct RemoteResourceStateMachine<Value: Sendable> {
    /// How hard a refresh tries.
    enum Mode: Sendable {
        /// ``RemoteResource/refresh()``: no request while the value is fresh or failures cool down.
        case ifStale
        /// An auto-refresh tick: a conditional request whatever the TTL, unless failures cool down.
        case revalidate
        /// ``RemoteResource/forceRefresh()``: an unconditional request, now.
        case reload
    }

    /// What to do for a refresh.
    enum Decision: Equatable {
        /// No request: the refresh ends with this outcome.
        case serve(RemoteResourceOutcome)
        /// Send a request, with `If-None-Match` when `etag` is set.
        case fetch(etag: String?)
    }

    /// The value held, with the body it came from (to rewrite the cache on `304`).
    struct Current {
        var value: Value
        var body: [UInt8]
        var etag: String?
        var fetchedAt: Date
    }

    let cacheTTL: TimeInterval
    private(set) var current: Current?
    private(set) var backoff: Backoff
    private(set) var lastError: RemoteResourceError?
    private(set) var lastOutcome: RemoteResourceOutcome?
    var cacheError: RemoteResourceError?

    init(cacheTTL: TimeInterval, backoff: Backoff.Policy) {
        self.cacheTTL = cacheTTL
        self.backoff = Backoff(policy: backoff)
    }

    /// Adopts a value read from the disk cache at start-up (not an outcome: no refresh ran).
    mutating func loadedFromCache(_ value: Value, body: [UInt8], etag: String?, fetchedAt: Date) {
        guard current == nil else { return }
        current = Current(value: value, body: body, etag: etag, fetchedAt: fetchedAt)
    }

    /// Whether the held value is younger than the TTL at `now`. A confirmation time in the
    /// future (the clock moved back) does not count as fresh.
    func isFresh(at now: Date) -> Bool {
        guard let fetchedAt = current?.fetchedAt, fetchedAt <= now else { return false }
        return now.timeIntervalSince(fetchedAt) < cacheTTL
    }

    /// Decides what a refresh in `mode` at `now` does.
    mutating func decide(_ mode: Mode, now: Date) -> Decision {
        if mode == .ifStale && isFresh(at: now) {
            lastOutcome = .fromFreshCache
            lastError = nil
            return .serve(.fromFreshCache)
        }
        if mode != .reload && !backoff.canAttempt(at: now) {
            let outcome: RemoteResourceOutcome = current == nil ? .noValue : .fromStaleCache
            lastOutcome = outcome
            return .serve(outcome)
        }
        return .fetch(etag: mode == .reload ? nil : current?.etag)
    }

    /// A `2xx` body that decoded to `value`.
    /// - Returns: whether the value changed (the body differs from the held one).
    mutating func received(_ value: Value, body: [UInt8], etag: String?, now: Date) -> Bool {
        let changed = current?.body != body
        current = Current(value: changed ? value : current!.value, body: body, etag: etag, fetchedAt: now)
        succeed(.fromNetwork)
        return changed
    }

    /// A `304 Not Modified`.
    /// - Returns: false when there was no held value to confirm (the answer is then a failure).
    mutating func receivedNotModified(now: Date) -> Bool {
        guard current != nil else { return false }
        current!.fetchedAt = now
        succeed(.notModified)
        return true
    }

    /// A failed request (no response, a bad status, a body that did not validate).
    /// - Returns: the outcome: the last good value kept, or none.
    @discardableResult
    mutating func failed(
        _ error: RemoteResourceError,
        retryAfter: TimeInterval?,
        now: Date,
        random: inout some RandomNumberGenerator
    ) -> RemoteResourceOutcome {
        backoff.recordFailure(at: now, retryAfter: retryAfter, using: &random)
        lastError = error
        let outcome: RemoteResourceOutcome = current == nil ? .noValue : .fromStaleCache
        lastOutcome = outcome
        return outcome
    }

    /// When the next auto-refresh tick is due: `interval` after the last confirmation (now, when
    /// there is none), and never before the cool-down ends.
    func nextAutoRefresh(interval: TimeInterval, now: Date) -> Date {
        var due = current.map { min($0.fetchedAt, now).addingTimeInterval(interval) } ?? now
        if let nextAttempt = backoff.nextAttempt, nextAttempt > due { due = nextAttempt }
        return due
    }

    /// The state as callers see it.
    var snapshot: RemoteResourceSnapshot<Value> {
        RemoteResourceSnapshot(
            value: current?.value,
            outcome: lastOutcome,
            lastError: lastError,
            cacheError: cacheError,
            etag: current?.etag,
            fetchedAt: current?.fetchedAt,
            nextAttempt: backoff.nextAttempt,
            consecutiveFailures: backoff.failures
        )
    }

    private mutating func succeed(_ outcome: RemoteResourceOutcome) {
        backoff.recordSuccess()
        lastError = nil
        lastOutcome = outcome
    }
}
