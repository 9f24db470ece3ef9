import Foundation
import Logging
import TouchpointCore
import TouchpointEvents

#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif

/// Keeps the survey config up to date from a URL, and tells SwiftUI and the engine when it
/// changes.
///
/// ```swift
/// let manager = SurveyConfigManager(initial: bundledConfig)
/// manager.startAutoRefresh(url: URL(string: "https://example.com/survey.json")!, interval: 300)
/// SurveyTriggerView(manager: manager) { AppContent() }
/// ```
///
/// Fetching is the shared ``RemoteResource``: `If-None-Match`/`304`, a disk cache under
/// `<recorder.directory>/cache/` read back on the next launch, keep-last-good, and a cool-down
/// after failures. Each body goes through lenient loading (``SurveyConfig/load(json:)``):
/// - a usable body replaces the config, and a malformed survey in it is dropped and reported
///   (in ``lastLoad`` and the log) while the others work;
/// - a body that is not usable (not JSON, no `surveys` array, every survey malformed) never
///   replaces a good config; ``remoteSnapshot`` says why.
///
/// Observation: the manager is an `ObservableObject` (Combine on Apple platforms, OpenCombine
/// on Linux), so a SwiftUI view can hold it with `@ObservedObject` or `@StateObject`; it
/// sends `objectWillChange` on the main queue by default. Code that is not SwiftUI reads
/// ``updates()``, an `AsyncSequence`; ``SurveyEngine/init(manager:recorder:presenter:options:)`` does.
public final class SurveyConfigManager: ObservableObject, @unchecked Sendable {
    // Safe: every mutable field is in `state` (a lock); `objectWillChange` is a Combine (or
    // OpenCombine) publisher, which synchronises its own subscribers and sends.

    struct State {
        var config: SurveyConfig
        var lastLoad: SurveyConfigLoad?
        var resource: RemoteResource<SurveyConfigLoad>?
        var listener: Task<Void, Never>?
        var streams: [Int: AsyncStream<SurveyConfig>.Continuation] = [:]
        var nextStreamID = 0
    }

    /// Sent before the config changes, for SwiftUI.
    public let objectWillChange = ObservableObjectPublisher()
    /// Where fetched configs are cached.
    public let cacheDirectory: String
    private let transport: any HTTPTransport
    private let configuration: RemoteResourceConfiguration
    private let clock: any WallClock
    private let logger: Logger
    private let notificationQueue: DispatchQueue?
    private let state: Locked<State>
    /// Held while a fetched config is adopted, so adoptions never interleave.
    private let adoption = Locked(())

    /// Creates a manager that serves `initial` until a fetched (or cached) config replaces it.
    /// - Parameters:
    ///   - initial: the config to start with (bundled with the app, say).
    ///   - cacheDirectory: where fetched configs are cached; nil for `<recorder.directory>/cache`.
    ///   - recorder: the recorder whose directory holds the cache.
    ///   - transport: how requests are sent.
    ///   - configuration: cache TTL, timeout, cool-down, headers (a write key, say).
    ///   - clock: the time source.
    ///   - logger: where dropped surveys and refresh failures are reported.
    ///   - notificationQueue: the queue `objectWillChange` is sent on (main by default); nil
    ///     sends it on the thread that changed the config.
    public init(
        initial: SurveyConfig,
        cacheDirectory: String? = nil,
        recorder: EventRecorder = .shared,
        transport: any HTTPTransport = URLSessionTransport(),
        configuration: RemoteResourceConfiguration = RemoteResourceConfiguration(),
        clock: any WallClock = SystemClock(),
        logger: Logger = .touchpoint("surveys"),
        notificationQueue: DispatchQueue? = .main
    ) {
        self.cacheDirectory = cacheDirectory ?? LogLayout(base: recorder.directory).basePath + "/cache"
        self.transport = transport
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.notificationQueue = notificationQueue
        state = Locked(State(config: initial))
    }

    deinit {
        state.withLock { state in
            state.listener?.cancel()
            state.resource?.stopAutoRefresh()
            for continuation in state.streams.values { continuation.finish() }
        }
    }

    // MARK: Reading

    /// The config in use.
    public var config: SurveyConfig { state.withLock { $0.config } }

    /// The load of the config in use when it came from the network or the cache: its dropped
    /// surveys and problems. Nil while the initial config is in use.
    public var lastLoad: SurveyConfigLoad? { state.withLock { $0.lastLoad } }

    /// The URL configs are fetched from, once set.
    public var url: URL? { state.withLock { $0.resource?.url } }

    /// The state of the remote config: outcome and error of the last refresh, ETag, cool-down.
    public var remoteSnapshot: RemoteResourceSnapshot<SurveyConfigLoad>? {
        state.withLock { $0.resource }?.snapshot
    }

    /// The configs in use: the current one first, then each new one as it is accepted.
    public func updates() -> AsyncStream<SurveyConfig> {
        let (stream, continuation) = AsyncStream.makeStream(of: SurveyConfig.self, bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state in
            state.nextStreamID += 1
            state.streams[state.nextStreamID] = continuation
            continuation.yield(state.config)
            return state.nextStreamID
        }
        let state = self.state
        continuation.onTermination = { _ in state.withLock { _ = $0.streams.removeValue(forKey: id) } }
        return stream
    }

    // MARK: Refreshing

    /// Revalidates the config at `url` every `interval` seconds (a cached copy, if any, is
    /// used at once). Calling it again with another URL switches to it.
    /// - Parameters:
    ///   - url: where the config lives.
    ///   - interval: seconds between checks.
    public func startAutoRefresh(url: URL, interval: TimeInterval) {
        resource(for: url).startAutoRefresh(interval: interval)
    }

    /// Stops the schedule started by ``startAutoRefresh(url:interval:)``.
    public func stopAutoRefresh() {
        state.withLock { $0.resource }?.stopAutoRefresh()
    }

    /// Refreshes the config from `url` now (unless the cached copy is younger than the cache
    /// TTL, or failures are cooling down), and adopts it when it is usable.
    /// - Parameter url: where the config lives.
    /// - Returns: the remote state after the refresh.
    @discardableResult
    public func refresh(url: URL) async -> RemoteResourceSnapshot<SurveyConfigLoad> {
        let resource = resource(for: url)
        let snapshot = await resource.refresh()
        adoptCurrent(of: resource)
        return snapshot
    }

    // MARK: Internals

    private func resource(for url: URL) -> RemoteResource<SurveyConfigLoad> {
        let (resource, isNew): (RemoteResource<SurveyConfigLoad>, Bool) = state.withLock { state in
            if let existing = state.resource, existing.url == url { return (existing, false) }
            state.resource?.stopAutoRefresh()
            state.listener?.cancel()
            let resource = RemoteResource<SurveyConfigLoad>(
                url: url, cacheDirectory: cacheDirectory,
                cacheName: "surveys-" + StableHash.hex(of: url.absoluteString),
                transport: transport, configuration: configuration, clock: clock,
                decodeJSON: { json in
                    let load = SurveyConfig.load(json: json)
                    guard load.isUsable else {
                        throw SurveyConfigError(code: .invalidConfig, url: url, problems: load.problems)
                    }
                    return load
                })
            state.resource = resource
            return (resource, true)
        }
        if isNew {
            // The cache is read here, so a cached config is in use before this returns.
            adoptCurrent(of: resource)
            let values = resource.values()
            let listener = Task { [weak self, weak resource] in
                for await _ in values {
                    guard let self, let resource else { return }
                    self.adoptCurrent(of: resource)
                }
            }
            state.withLock { state in
                if state.resource === resource { state.listener = listener } else { listener.cancel() }
            }
        }
        return resource
    }

    /// Adopts the resource's current value (never an older one a slow stream still holds).
    /// Adoptions run one at a time, so `objectWillChange` is sent before the change is visible.
    private func adoptCurrent(of resource: RemoteResource<SurveyConfigLoad>) {
        guard let load = resource.value else { return }
        adoption.withLock { _ in
            let (isCurrent, isNewLoad, changes) = state.withLock { state in
                (state.resource === resource, state.lastLoad != load, state.config != load.config)
            }
            guard isCurrent else { return }
            if isNewLoad { load.log(to: logger, source: resource.url.absoluteString) }
            if changes { sendWillChange() }
            let continuations: [AsyncStream<SurveyConfig>.Continuation] = state.withLock { state in
                state.lastLoad = load
                guard changes else { return [] }
                state.config = load.config
                return Array(state.streams.values)
            }
            guard changes else { return }
            logger.info("survey config changed", metadata: ["surveys": "\(load.config.surveys.count)"])
            for continuation in continuations { continuation.yield(load.config) }
        }
    }

    private func sendWillChange() {
        guard let notificationQueue else { return objectWillChange.send() }
        notificationQueue.async { self.objectWillChange.send() }
    }
}
