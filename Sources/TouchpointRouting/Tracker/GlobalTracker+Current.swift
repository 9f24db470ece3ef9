import TouchpointCore
import TouchpointEvents

extension GlobalTracker {
    /// The tracker of ``EventRecorder/shared``, created on first use.
    ///
    /// ``startTracking(adapters:recorder:)`` replaces it with one for another recorder.
    public static var shared: GlobalTracker {
        sharedTracker.withLock { tracker in
            if let tracker { return tracker }
            let created = GlobalTracker(recorder: .shared)
            tracker = created
            return created
        }
    }

    /// A tracker bound to the current task (or, outside a task, thread) with
    /// `GlobalTracker.$scoped.withValue(tracker) { … }`; nil by default.
    ///
    /// ```swift
    /// let tracker = GlobalTracker(recorder: EventRecorder(directory: temporaryFolder))
    /// GlobalTracker.$scoped.withValue(tracker) {
    ///     Events.App.Opened(appName: "My App").trigger()  // recorded and routed by `tracker`
    /// }
    /// ```
    @TaskLocal public static var scoped: GlobalTracker?

    /// The tracker that ``TrackableEvent/trigger()``, ``TrackableProperty/update()`` and the
    /// static API use: ``scoped`` when bound, otherwise ``shared``.
    public static var current: GlobalTracker { scoped ?? shared }

    /// Plugs adapters into ``current`` and starts tracking (see the instance method of the same
    /// name).
    ///
    /// ```swift
    /// GlobalTracker.startTracking(adapters: [MixpanelAdapter(token: "abcd")])
    /// ```
    public static func startTracking(adapters: sending [any AnalyticsAdapter]) {
        current.startTracking(adapters: adapters)
    }

    /// Plugs adapters into the tracker of `recorder` and starts tracking; that tracker becomes
    /// ``shared`` (unless a ``scoped`` tracker is bound, which is used as it is).
    ///
    /// Call it before anything is triggered: events queued by the previous shared tracker move
    /// to the new one, but they stay in the previous recorder's log.
    public static func startTracking(adapters: sending [any AnalyticsAdapter], recorder: EventRecorder) {
        if let scoped {
            scoped.startTracking(adapters: adapters)
            return
        }
        let tracker: GlobalTracker = sharedTracker.withLock { shared in
            if let current = shared, current.recorder === recorder { return current }
            let replacement = GlobalTracker(recorder: recorder)
            if let previous = shared {
                previous.stopTracking()
                if !previous.hub.isStarted { replacement.hub.enqueue(contentsOf: previous.hub.removeAll()) }
                replacement.loggingLevel = previous.loggingLevel
                replacement.log.setHandler(previous.log.current.handler)
            }
            shared = replacement
            return replacement
        }
        tracker.startTracking(adapters: adapters)
    }

    /// Stops ``current`` (see the instance method of the same name).
    public static func stopTracking() {
        current.stopTracking()
    }

    /// How much ``current`` tells its log handler; `.none` by default.
    ///
    /// ```swift
    /// GlobalTracker.loggingLevel = .info
    /// ```
    public static var loggingLevel: LoggingLevel {
        get { current.loggingLevel }
        set { current.loggingLevel = newValue }
    }

    /// Replaces `print` as the destination of ``current``'s messages.
    ///
    /// ```swift
    /// GlobalTracker.log { message in
    ///     SwiftyBeaver.log.info(message)
    /// }
    /// ```
    public static func log(_ handler: @escaping @Sendable (String) -> Void) {
        current.log(handler)
    }

    private static let sharedTracker = Locked<GlobalTracker?>(nil)
}
