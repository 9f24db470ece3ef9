/// An analytics tool plugged into the ``GlobalTracker``: Mixpanel, Intercom, Firebase, your own.
///
/// ```swift
/// class MixpanelAdapter: AnalyticsAdapter {
///     private let token: String
///
///     var name: String { "Mixpanel" }  // optional, for logs; the type's name by default
///
///     init(token: String) {
///         self.token = token
///     }
///
///     func configure() {
///         _ = Mixpanel.sharedInstance(withToken: token)
///     }
///
///     func track(event: TrackableEvent) {
///         Mixpanel.sharedInstance()?.track(event.identifier.stringValue, properties: event.metadata)
///     }
///
///     func track(property: TrackableProperty) {
///         Mixpanel.sharedInstance()?.people.set(property.identifier, to: property.trackedValue)
///     }
///
///     func reset() {  // optional: the user signed out
///         Mixpanel.sharedInstance()?.reset()
///     }
/// }
///
/// GlobalTracker.startTracking(adapters: [MixpanelAdapter(token: "abcd")])
/// ```
///
/// **Threads.** Each adapter gets its own thread when tracking starts; every call to it
/// (``configure()`` first, then `track` and ``reset()`` in log order, and reads of its rules and ``name``) is
/// made on that thread, one at a time. So an adapter needs no locking of its own, and can be a
/// plain class: ``GlobalTracker/startTracking(adapters:)`` takes the adapters as `sending`, so
/// in Swift 6 the compiler checks that the caller hands them over and keeps no access to them.
/// An adapter that must call main-thread-only SDK code dispatches to the main queue itself. In a
/// module whose default isolation is `MainActor`, declare the adapter `nonisolated`.
///
/// A slow or hanging adapter delays only itself. Methods may throw: a throwing ``configure()``
/// disables the adapter (it receives nothing, and everything meant for it is counted as
/// dropped); a throwing `track` is logged and counted, and later events still arrive. A trap
/// (a crash) cannot be caught in Swift and ends the app as usual.
public protocol AnalyticsAdapter: AnyObject {
    /// The adapter's name in logs and statistics; the type's name by default.
    var name: String { get }

    /// Which events this adapter receives; nil (the default) for all.
    var eventTrackingRule: EventTrackingRule? { get }

    /// Which properties this adapter receives; nil (the default) for all.
    var propertyTrackingRule: PropertyTrackingRule? { get }

    /// Sets the tool up; called once, on the adapter's thread, before anything is tracked.
    /// Events and properties that arrive meanwhile wait, in order.
    func configure() throws

    /// Sends an event to the tool.
    func track(event: any TrackableEvent) throws

    /// Sends a property (a user trait) to the tool.
    func track(property: any TrackableProperty) throws

    /// Forgets the user: the app reset the identity (a sign-out, `TouchpointSDK.reset()`,
    /// ``EventRecorder/resetIdentity()``) or deleted what was recorded. A tool that keeps the
    /// user's id or traits (Mixpanel's `reset()`, Intercom's `logout()`, Firebase's
    /// `setUserID(nil)`) clears them here, so the next person's events do not carry them.
    ///
    /// Called on the adapter's thread in log order: after every event of the previous user,
    /// before any of the next. Does nothing by default, which is right for a tool that keeps no
    /// user. A throwing reset is logged and counted as failed.
    func reset() throws
}

extension AnalyticsAdapter {
    /// The type's name, e.g. `MixpanelAdapter`.
    public var name: String { String(describing: type(of: self)) }

    /// All events.
    public var eventTrackingRule: EventTrackingRule? { nil }

    /// All properties.
    public var propertyTrackingRule: PropertyTrackingRule? { nil }

    /// Nothing to forget.
    public func reset() {}
}
