import Foundation
import Logging
import TouchpointCore
import TouchpointEvents

/// The hub between the event log and the analytics adapters.
///
/// ```swift
/// // AppDelegate.swift
/// GlobalTracker.startTracking(adapters: [MixpanelAdapter(token: "abcd")])
///
/// // anywhere
/// Events.App.Opened(appName: "My App").trigger()
/// Email(value: "test@test.com").update()
/// ```
///
/// **One pipeline.** A tracker is an ``EventConsumer`` of one ``EventRecorder``
/// (``EventRecorder/shared`` for ``shared``). ``TrackableEvent/trigger()`` and
/// ``TrackableProperty/update()`` record through that recorder, so every event, whichever door it
/// came in by (``EventRecorder/record(_:properties:type:attachment:)`` included), is in the log
/// and reaches each adapter once, in log order. Typed events reach adapters as the values that
/// were triggered; untyped ones as ``RecordedEvent`` (and untyped `identify` traits as
/// ``RecordedProperty``).
///
/// **Asynchronous.** The recorder's thread only appends the event to a bounded queue. Each
/// adapter has its own thread: it runs ``AnalyticsAdapter/configure()``, then delivers the
/// queue in order. Events recorded before ``startTracking(adapters:)``, or before an adapter is
/// configured, wait for it. A slow adapter delays only itself.
///
/// **Tests** bind a tracker of their own with `GlobalTracker.$scoped.withValue(tracker) { … }`,
/// so that `trigger()`, `update()` and the static API use it instead of ``shared``.
public final class GlobalTracker: EventConsumer, Sendable {
    /// The recorder this tracker routes from.
    public let recorder: EventRecorder
    /// The tracker's settings.
    public let configuration: GlobalTrackerConfiguration

    let hub: DeliveryHub
    let log: TrackerLog
    let traitStore: TraitStore
    private let lifecycle = Locked(Lifecycle())

    private struct Lifecycle {
        var lanes: [AdapterLane] = []
        var stopped = false
    }

    /// Creates a tracker and registers it with `recorder`: from now on every recorded event is
    /// queued for the adapters that ``startTracking(adapters:)`` will bring.
    /// - Parameters:
    ///   - recorder: the recorder to route from, and to record triggered events and properties in.
    ///   - configuration: queue size, linger time and logger.
    public init(recorder: EventRecorder = .shared, configuration: GlobalTrackerConfiguration = .init()) {
        self.recorder = recorder
        self.configuration = configuration
        hub = DeliveryHub(capacity: configuration.queueCapacity, lingerInterval: configuration.lingerInterval)
        log = TrackerLog(logger: configuration.logger)
        traitStore = TraitStore(
            path: LogLayout(base: recorder.directory).statePath + "/traits.json", logger: configuration.logger)
        recorder.addConsumer(self)
    }

    // MARK: Adapters

    /// Plugs in adapters and starts tracking: each adapter gets its own thread, which calls
    /// ``AnalyticsAdapter/configure()`` and then delivers every event queued so far and every
    /// later one, in log order.
    ///
    /// Calling it again adds more adapters; they receive events recorded from then on. A
    /// stopped tracker does not start again.
    /// - Parameter adapters: the adapters, handed over to the tracker: each is used only on its
    ///   own thread from now on.
    public func startTracking(adapters: sending [any AnalyticsAdapter]) {
        let names = adapters.map(\.name)
        let lanes: [AdapterLane]? = lifecycle.withLock { lifecycle in
            guard !lifecycle.stopped else { return nil }
            let indices = hub.addLanes(named: names)
            let lanes = zip(indices, zip(adapters, names)).map { index, pair in
                AdapterLane(adapter: pair.0, name: pair.1, index: index, hub: hub, log: log)
            }
            lifecycle.lanes += lanes
            return lanes
        }
        guard let lanes else {
            log.problem("-[GlobalTracker]: NOT STARTED - the tracker was stopped", severity: .error)
            return
        }
        for lane in lanes { lane.start() }
    }

    /// Stops routing: the tracker leaves its recorder, the adapters finish what is queued, and
    /// their threads end (a hanging adapter's thread stays with it).
    public func stopTracking() {
        let first = lifecycle.withLock { lifecycle in
            defer { lifecycle.stopped = true }
            return !lifecycle.stopped
        }
        guard first else { return }
        recorder.removeConsumer(self)
        hub.close()
    }

    /// Whether ``startTracking(adapters:)`` was called and ``stopTracking()`` was not.
    public var isTracking: Bool {
        lifecycle.withLock { !$0.stopped && !$0.lanes.isEmpty }
    }

    // MARK: Events and properties

    /// Records a typed event and routes it; what ``TrackableEvent/trigger()`` does.
    ///
    /// The metadata is converted on the calling thread (see ``MetadataConversion``); values that
    /// cannot be recorded are reported and counted, and the event is recorded without them.
    /// - Returns: the event as written to the log, or nil when the recorder rejected it.
    @discardableResult
    public func trigger(_ event: any TrackableEvent) -> Event? {
        let name = event.identifier.stringValue
        let conversion = MetadataConversion(event.metadata)
        if !conversion.problems.isEmpty {
            hub.noteUntrackableValues(conversion.problems.count)
            for problem in conversion.problems {
                log.problem(TrackerLog.valueNotRecorded(event: name, problem: problem), severity: .warning)
            }
        }
        return recorder.record(name, properties: conversion.properties, attachment: TypedEventBox(event))
    }

    /// Records a property as an `identify` event, routes it, then triggers its
    /// ``TrackableProperty/generateUpdateEvents()``; what ``TrackableProperty/update()`` does.
    /// - Returns: the `identify` event as written to the log, or nil when it was rejected.
    @discardableResult
    public func update(_ property: any TrackableProperty) -> Event? {
        let value = property.trackedValue?.eventValue ?? .null
        let recorded = recorder.record(
            "identify", properties: [property.identifier: value], type: .identify,
            attachment: TypedPropertyBox(property))
        for event in property.generateUpdateEvents() { trigger(event) }
        return recorded
    }

    /// The current traits of a user (nil: the anonymous user), as kept on disk in
    /// `<recorder directory>/state/traits.json`.
    public func traits(forUserID userID: String?) async -> [String: EventValue] {
        await traitStore.traits(forUserID: userID)
    }

    // MARK: Logging

    /// How much the tracker tells its log handler; `.none` by default.
    public var loggingLevel: LoggingLevel {
        get { log.level }
        set { log.level = newValue }
    }

    /// Replaces `print` as the destination of the tracker's messages.
    ///
    /// The handler is called from the adapters' threads, possibly at the same time.
    public func log(_ handler: @escaping @Sendable (String) -> Void) {
        log.setHandler(handler)
    }

    // MARK: Observing

    /// Counters of what was routed, per adapter.
    public var statistics: RoutingStatistics { hub.statistics() }

    /// Waits until every adapter is done with (delivered, skipped by its rule, or dropped) every
    /// event recorded before the call, or until `timeout`. Waits for tracking to start first.
    /// - Parameters:
    ///   - adapters: the names of the adapters to wait for; all when nil.
    ///   - timeout: the longest wait.
    /// - Returns: false when the time ran out first (a hanging adapter, say).
    @discardableResult
    public func waitUntilDelivered(adapters: Set<String>? = nil, timeout: Duration = .seconds(10)) async -> Bool {
        let chosen: Set<Int>? = adapters.map { names in
            Set(lifecycle.withLock { $0.lanes }.filter { names.contains($0.name) }.map(\.index))
        }
        return await hub.waitUntilDone(lanes: chosen, timeout: timeout)
    }

    // MARK: EventConsumer

    /// Queues a recorded event for the adapters (called by the recorder, in log order).
    public func eventRecorder(_ recorder: EventRecorder, didRecord event: Event, attachment: (any Sendable)?) {
        let item: DeliveryItem
        if let box = attachment as? TypedEventBox {
            item = .event(event, box)
        } else if event.type == .identify {
            if let box = attachment as? TypedPropertyBox {
                item = .property(event, box)
            } else {
                item = .traits(event)
            }
        } else {
            item = .event(event, nil)
        }
        if event.type == .identify { traitStore.merge(userId: event.userId, traits: event.properties) }
        hub.enqueue(item)
    }

    /// Forgets the anonymous user's traits and has every adapter forget the user
    /// (``AnalyticsAdapter/reset()``, after the previous user's events): the recorder started a
    /// new anonymous user.
    public func eventRecorder(_ recorder: EventRecorder, didResetIdentity anonymousId: String) {
        traitStore.forgetAnonymous()
        hub.enqueue(.reset)
    }

    /// Forgets the traits and has every adapter forget the user: the recorder deleted its state.
    public func eventRecorderDidClear(_ recorder: EventRecorder) {
        traitStore.clear()
        hub.enqueue(.reset)
    }

    deinit { hub.close() }
}
