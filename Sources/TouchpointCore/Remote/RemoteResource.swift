import Foundation
import Logging

/// A JSON resource fetched over HTTP and kept usable through failures: the one implementation
/// of remote configuration in Touchpoint (the survey config and the promo catalog both use it).
///
/// - **Validation first.** Every body goes through the `decode` closure; a body that throws is
///   reported and never replaces the value or the cache.
/// - **ETag.** A held value's entity tag is sent as `If-None-Match`; `304` confirms it.
/// - **Disk cache.** Each good body is written (with its ETag and fetch time) to one file under
///   the caller's cache directory, and read back on a cold start; a corrupt file is ignored and
///   reported in ``RemoteResourceSnapshot/cacheError``.
/// - **Cache TTL.** ``refresh()`` makes no request while the value is younger than
///   ``RemoteResourceConfiguration/cacheTTL``; ``forceRefresh()`` always asks.
/// - **Keep last good.** On any failure the previous value stays (outcome
///   ``RemoteResourceOutcome/fromStaleCache``); without one the outcome is ``RemoteResourceOutcome/noValue``.
/// - **Cool-down.** After failures, requests pause for a ``Backoff`` delay (honouring
///   `Retry-After`); ``refresh()`` and auto-refresh wait it out.
/// - **Live values.** ``values()`` streams each new value, so a consumer can switch configs
///   without a restart; ``startAutoRefresh(interval:)`` revalidates on a schedule.
/// - **Consent.** While the configuration's ``RemoteResourceConfiguration/gate`` is closed (the
///   user opted out), no request is sent: refreshes serve what is held, auto-refresh waits.
///
/// Concurrent refreshes share one request. Time comes from a ``WallClock``, so tests can move it.
///
/// ```swift
/// let catalog = RemoteResource(
///     url: catalogURL,
///     cacheDirectory: base + "/cache",
///     cacheName: "promo-catalog",
///     decodeJSON: { json in try PromoCatalog(json: json) }
/// )
/// let snapshot = await catalog.refresh()          // network → cache → nothing
/// show(snapshot.value?.apps ?? [], error: snapshot.lastError)
/// ```
public final class RemoteResource<Value: Sendable>: Sendable {
    /// Turns a response body into a value, or throws to reject it.
    public typealias Decoder = @Sendable ([UInt8]) throws -> Value

    struct Inner {
        var machine: RemoteResourceStateMachine<Value>
        var random: SeededRandomNumberGenerator
        var cacheLoaded = false
        var inFlight: (id: Int, task: Task<RemoteResourceSnapshot<Value>, Never>)?
        /// The calls waiting for `inFlight`: the one that started it and those that joined it.
        var inFlightCallers = 0
        var nextFetchID = 0
        var autoRefresh: Task<Void, Never>?
        var nextStreamID = 0
        var valueStreams: [Int: AsyncStream<Value>.Continuation] = [:]
        var snapshotStreams: [Int: AsyncStream<RemoteResourceSnapshot<Value>>.Continuation] = [:]
    }

    /// The resource's URL.
    public let url: URL
    /// How it fetches, caches and cools down.
    public let configuration: RemoteResourceConfiguration
    /// The cache file's path, or nil when there is no disk cache.
    public var cachePath: String? { cacheFile?.path }

    private let transport: any HTTPTransport
    private let clock: any WallClock
    private let decode: Decoder
    private let cacheFile: RemoteResourceCacheFile?
    private let inner: Locked<Inner>
    private let logger = Logger.touchpoint("remote")

    /// Creates a resource over raw body bytes. Nothing is fetched or read until first used.
    /// - Parameters:
    ///   - url: where the resource lives.
    ///   - cacheDirectory: the directory for the cache file (the SDK's `<base>/cache`); nil
    ///     keeps no disk cache.
    ///   - cacheName: the cache file's name without extension; by default derived from the URL.
    ///   - transport: how requests are sent.
    ///   - configuration: TTL, timeout, cool-down, headers.
    ///   - clock: the time source (a `ManualClock` in tests).
    ///   - decode: turns a body into a value, or throws to reject it; what it throws is
    ///     reported as ``RemoteResourceError/Code/invalidBody``.
    public init(
        url: URL,
        cacheDirectory: String?,
        cacheName: String? = nil,
        transport: any HTTPTransport = URLSessionTransport(),
        configuration: RemoteResourceConfiguration = RemoteResourceConfiguration(),
        clock: any WallClock = SystemClock(),
        decode: @escaping Decoder
    ) {
        self.url = url
        self.configuration = configuration
        self.transport = transport
        self.clock = clock
        self.decode = decode
        cacheFile = cacheDirectory.map { directory in
            let name = cacheName ?? "resource-" + StableHash.hex(of: url.absoluteString)
            return RemoteResourceCacheFile(path: directory + "/" + name + ".cache", url: url)
        }
        let seed = configuration.jitterSeed ?? UInt64.random(in: 0...UInt64.max)
        inner = Locked(
            Inner(
                machine: RemoteResourceStateMachine(cacheTTL: configuration.cacheTTL, backoff: configuration.backoff),
                random: SeededRandomNumberGenerator(seed: seed)
            )
        )
    }

    /// Creates a resource over a JSON body. Nothing is fetched or read until first used.
    /// - Parameters:
    ///   - url: where the resource lives.
    ///   - cacheDirectory: the directory for the cache file; nil keeps no disk cache.
    ///   - cacheName: the cache file's name without extension; by default derived from the URL.
    ///   - transport: how requests are sent.
    ///   - configuration: TTL, timeout, cool-down, headers.
    ///   - clock: the time source.
    ///   - decodeJSON: validates the parsed body and turns it into a value, or throws (a
    ///     `JSONProblem` naming the path, ideally). A body that is not JSON is rejected before it.
    public convenience init(
        url: URL,
        cacheDirectory: String?,
        cacheName: String? = nil,
        transport: any HTTPTransport = URLSessionTransport(),
        configuration: RemoteResourceConfiguration = RemoteResourceConfiguration(),
        clock: any WallClock = SystemClock(),
        decodeJSON: @escaping @Sendable (JSONValue) throws -> Value
    ) {
        self.init(
            url: url,
            cacheDirectory: cacheDirectory,
            cacheName: cacheName,
            transport: transport,
            configuration: configuration,
            clock: clock,
            decode: { bytes in try decodeJSON(JSONParser.parse(bytes)) }
        )
    }

    deinit {
        // Streams are finished outside the lock: their `onTermination` handlers take it.
        let (autoRefresh, values, snapshots) = inner.withLock { inner in
            defer {
                inner.valueStreams.removeAll()
                inner.snapshotStreams.removeAll()
            }
            return (inner.autoRefresh, Array(inner.valueStreams.values), Array(inner.snapshotStreams.values))
        }
        autoRefresh?.cancel()
        for continuation in values { continuation.finish() }
        for continuation in snapshots { continuation.finish() }
    }

    // MARK: Reading

    /// The current state: value, last outcome and error, cool-down. Reads the disk cache on
    /// first use.
    public var snapshot: RemoteResourceSnapshot<Value> {
        loadCacheIfNeeded()
        return inner.withLock { $0.machine.snapshot }
    }

    /// The current value (from the network or the disk cache), or nil.
    public var value: Value? { snapshot.value }

    // MARK: Refreshing

    /// Brings the value up to date unless it is fresh: no request while the value is younger
    /// than the cache TTL or failures cool down; otherwise a conditional request.
    /// - Returns: the state after the refresh; ``RemoteResourceSnapshot/outcome`` says how it went.
    @discardableResult
    public func refresh() async -> RemoteResourceSnapshot<Value> { await run(.ifStale) }

    /// Fetches the resource now, ignoring the cache TTL, the ETag and any cool-down (for a
    /// user's pull-to-refresh). A failure still keeps the last good value. Like every refresh,
    /// it joins a request already in flight rather than sending a second one.
    /// - Returns: the state after the fetch.
    @discardableResult
    public func forceRefresh() async -> RemoteResourceSnapshot<Value> { await run(.reload) }

    /// Revalidates the resource every `interval` seconds (a conditional request whatever the
    /// TTL) until ``stopAutoRefresh()``; after failures the next request waits for the
    /// cool-down instead. The first check happens at once unless the value was confirmed less
    /// than `interval` ago. Calling it again replaces the schedule.
    public func startAutoRefresh(interval: TimeInterval) {
        let interval = interval.isFinite && interval > 0 ? interval : 1
        inner.withLock { inner in
            inner.autoRefresh?.cancel()
            let gate = configuration.gate
            inner.autoRefresh = Task { [weak self] in
                while !Task.isCancelled {
                    // Closed (the user opted out): no check until it opens, then at once if due.
                    if let gate { await gate.waitUntilOpen() }
                    guard !Task.isCancelled else { return }
                    guard let delay = await self?.autoRefreshStep(interval: interval) else { return }
                    // Sleep at most a minute at a time, so wall-clock jumps are noticed.
                    let nanoseconds = UInt64(min(max(delay, 0.001), 60) * 1_000_000_000)
                    try? await Task.sleep(nanoseconds: nanoseconds)
                }
            }
        }
    }

    /// Stops the schedule started by ``startAutoRefresh(interval:)``; a request in flight completes.
    public func stopAutoRefresh() {
        inner.withLock { inner in
            inner.autoRefresh?.cancel()
            inner.autoRefresh = nil
        }
    }

    /// Whether an auto-refresh schedule is running.
    public var isAutoRefreshing: Bool { inner.withLock { $0.autoRefresh != nil } }

    // MARK: Observing

    /// A stream of values: the current one first (if any), then each new value as a refresh
    /// accepts it. A slow reader gets the newest value, not a backlog.
    public func values() -> AsyncStream<Value> {
        loadCacheIfNeeded()
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .bufferingNewest(1))
        let id = inner.withLock { inner in
            inner.nextStreamID += 1
            inner.valueStreams[inner.nextStreamID] = continuation
            if let value = inner.machine.current?.value { continuation.yield(value) }
            return inner.nextStreamID
        }
        let inner = self.inner
        continuation.onTermination = { _ in inner.withLock { _ = $0.valueStreams.removeValue(forKey: id) } }
        return stream
    }

    /// A stream of snapshots, one after every refresh (successful or not), for a UI that shows
    /// loading errors. A slow reader gets the newest snapshot.
    public func snapshots() -> AsyncStream<RemoteResourceSnapshot<Value>> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: RemoteResourceSnapshot<Value>.self,
            bufferingPolicy: .bufferingNewest(1)
        )
        let id = inner.withLock { inner in
            inner.nextStreamID += 1
            inner.snapshotStreams[inner.nextStreamID] = continuation
            return inner.nextStreamID
        }
        let inner = self.inner
        continuation.onTermination = { _ in inner.withLock { _ = $0.snapshotStreams.removeValue(forKey: id) } }
        return stream
    }

    // MARK: Internals

    /// One auto-refresh tick: revalidates when due.
    /// - Returns: seconds until the next tick is due.
    func autoRefreshStep(interval: TimeInterval) async -> TimeInterval {
        loadCacheIfNeeded()
        let now = clock.now()
        let due = inner.withLock { $0.machine.nextAutoRefresh(interval: interval, now: now) }
        if due <= now { _ = await run(.revalidate) }
        let after = clock.now()
        return inner.withLock { $0.machine.nextAutoRefresh(interval: interval, now: after) }.timeIntervalSince(after)
    }

    /// How many calls wait for the request in flight (the one that sent it and those that joined
    /// it); 0 when none is in flight.
    var callersWaitingForRequest: Int { inner.withLock { $0.inFlightCallers } }

    /// Runs one refresh in `mode`, joining a request already in flight.
    func run(_ mode: RemoteResourceStateMachine<Value>.Mode) async -> RemoteResourceSnapshot<Value> {
        loadCacheIfNeeded()
        let now = clock.now()
        let isClosed = configuration.gate.map { !$0.isOpen } ?? false
        let (served, task): (RemoteResourceSnapshot<Value>?, Task<RemoteResourceSnapshot<Value>, Never>?) =
            inner.withLock { inner in
                if let inFlight = inner.inFlight {
                    inner.inFlightCallers += 1
                    return (nil, inFlight.task)
                }
                if isClosed { return (inner.machine.snapshot, nil) }
                switch inner.machine.decide(mode, now: now) {
                case .serve:
                    return (inner.machine.snapshot, nil)
                case .fetch(let etag):
                    inner.nextFetchID += 1
                    let id = inner.nextFetchID
                    let task = Task { await self.fetch(etag: etag, id: id) }
                    inner.inFlight = (id, task)
                    inner.inFlightCallers = 1
                    return (nil, task)
                }
            }
        if let served {
            publish(snapshot: served, newValue: nil)
            return served
        }
        return await task!.value
    }

    /// What a request came back with.
    private enum FetchAnswer {
        case body([UInt8], Value, etag: String?)
        case notModified
        case failure(RemoteResourceError, retryAfter: TimeInterval?)
    }

    /// Sends the request and applies the answer; clears the in-flight marker at the end.
    private func fetch(etag: String?, id: Int) async -> RemoteResourceSnapshot<Value> {
        var request = TransportRequest(url: url, headers: configuration.headers, timeout: configuration.requestTimeout)
        if !request.headers.contains("Accept") { request.headers["Accept"] = "application/json" }
        if let etag { request.headers["If-None-Match"] = etag }
        let answer: FetchAnswer
        do {
            let response = try await transport.send(request)
            switch response.status {
            case 304:
                answer = .notModified
            case 200..<300:
                do {
                    let value = try decode(response.body)
                    answer = .body(response.body, value, etag: response.headers["ETag"])
                } catch {
                    answer = .failure(
                        RemoteResourceError(code: .invalidBody, url: url, message: "\(error)"),
                        retryAfter: nil
                    )
                }
            default:
                answer = .failure(
                    RemoteResourceError(
                        code: .httpStatus,
                        url: url,
                        message: "the server answered \(response.status)",
                        status: response.status
                    ),
                    retryAfter: response.retryAfter(now: clock.now())
                )
            }
        } catch let error as TransportError {
            answer = .failure(
                RemoteResourceError(code: .transport, url: url, message: error.description, transportError: error),
                retryAfter: nil
            )
        } catch {
            answer = .failure(RemoteResourceError(code: .transport, url: url, message: "\(error)"), retryAfter: nil)
        }

        let now = clock.now()
        var cacheEntry: RemoteResourceCacheFile.Entry?
        var newValue: Value?
        let snapshot: RemoteResourceSnapshot<Value> = inner.withLock { inner in
            defer {
                if inner.inFlight?.id == id {
                    inner.inFlight = nil
                    inner.inFlightCallers = 0
                }
            }
            switch answer {
            case .body(let body, let value, let etag):
                if inner.machine.received(value, body: body, etag: etag, now: now) { newValue = value }
                cacheEntry = RemoteResourceCacheFile.Entry(body: body, etag: etag, fetchedAt: now)
            case .notModified:
                if inner.machine.receivedNotModified(now: now), let current = inner.machine.current {
                    cacheEntry = RemoteResourceCacheFile.Entry(body: current.body, etag: current.etag, fetchedAt: now)
                } else {
                    let error = RemoteResourceError(
                        code: .notModifiedWithoutCache,
                        url: url,
                        message: "the server answered 304 but no cached body was offered"
                    )
                    inner.machine.failed(error, retryAfter: nil, now: now, random: &inner.random)
                }
            case .failure(let error, let retryAfter):
                inner.machine.failed(error, retryAfter: retryAfter, now: now, random: &inner.random)
            }
            if let cacheEntry { writeCache(cacheEntry, machine: &inner.machine) }
            return inner.machine.snapshot
        }
        if let error = snapshot.lastError {
            logger.warning(
                "remote resource refresh failed",
                metadata: [
                    "url": "\(url.absoluteString)", "error": "\(error)",
                    "failures": "\(snapshot.consecutiveFailures)",
                ]
            )
        }
        publish(snapshot: snapshot, newValue: newValue)
        return snapshot
    }

    /// Writes a good body to the cache; a failure is recorded, not thrown (the value is still good).
    /// Runs under the lock so writes land in the order their answers were applied.
    private func writeCache(_ entry: RemoteResourceCacheFile.Entry, machine: inout RemoteResourceStateMachine<Value>) {
        guard let cacheFile else { return }
        do {
            try cacheFile.write(entry)
            if machine.cacheError?.code == .cacheWriteFailed { machine.cacheError = nil }
        } catch {
            machine.cacheError = RemoteResourceError(code: .cacheWriteFailed, url: url, message: "\(error)")
        }
    }

    /// Reads the disk cache once, before anything else uses the state. The file is read and
    /// decoded outside the lock, so a decoder may read the resource without deadlocking.
    private func loadCacheIfNeeded() {
        guard inner.withLock({ !$0.cacheLoaded }) else { return }
        var loaded: (entry: RemoteResourceCacheFile.Entry, value: Value)?
        var problem: RemoteResourceError?
        if let cacheFile {
            do throws(RemoteResourceCacheFile.Problem) {
                if let entry = try cacheFile.read() {
                    do {
                        loaded = (entry, try decode(entry.body))
                    } catch {
                        problem = RemoteResourceError(
                            code: .corruptCache,
                            url: url,
                            message: "\(cacheFile.path): the cached body no longer decodes: \(error)"
                        )
                    }
                }
            } catch {
                problem = RemoteResourceError(
                    code: .corruptCache, url: url, message: "\(cacheFile.path): \(error.reason)")
            }
        }
        let applied = inner.withLock { inner in
            guard !inner.cacheLoaded else { return false }
            inner.cacheLoaded = true
            if let loaded {
                inner.machine.loadedFromCache(
                    loaded.value,
                    body: loaded.entry.body,
                    etag: loaded.entry.etag,
                    fetchedAt: loaded.entry.fetchedAt
                )
            }
            if let problem { inner.machine.cacheError = problem }
            return true
        }
        if applied, let problem {
            logger.warning("ignored an unusable cache file", metadata: ["error": "\(problem)"])
        }
    }

    private func publish(snapshot: RemoteResourceSnapshot<Value>, newValue: Value?) {
        inner.withLock { inner in
            if let newValue {
                for continuation in inner.valueStreams.values { continuation.yield(newValue) }
            }
            for continuation in inner.snapshotStreams.values { continuation.yield(snapshot) }
        }
    }
}
