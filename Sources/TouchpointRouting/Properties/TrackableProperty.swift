import TouchpointEvents

/// A property of the user (a trait): an email address, a plan, a push token.
///
/// ```swift
/// struct Email: TrackableProperty {
///     let identifier: String = "email"
///     let value: String
///
///     var trackedValue: TrackableValueType? { return value }
///
///     func generateUpdateEvents() -> [TrackableEvent] {
///         return [EmailChanged(newEmail: value)]
///     }
/// }
///
/// Email(value: "test@test.com").update()
/// ```
///
/// ``update()`` records an `identify` event whose properties are `[identifier: trackedValue]`,
/// keeps the trait in the user's traits on disk, hands the property to every adapter whose rule
/// allows it, and then triggers the events of ``generateUpdateEvents()``.
public protocol TrackableProperty {
    /// The trait's name, e.g. `email`.
    var identifier: String { get }

    /// The value to record; nil clears the trait (recorded as `null`).
    var trackedValue: (any TrackableValueType)? { get }

    /// Events to trigger right after the property is updated (none by default).
    func generateUpdateEvents() -> [any TrackableEvent]
}

extension TrackableProperty {
    /// No events.
    public func generateUpdateEvents() -> [any TrackableEvent] { [] }

    /// Records the property, routes it to the adapters, then triggers
    /// ``generateUpdateEvents()``, through ``GlobalTracker/current``.
    ///
    /// Safe from any thread, the main thread included.
    /// - Returns: the `identify` event as written to the log, or nil when it was rejected.
    @discardableResult
    public func update() -> Event? {
        GlobalTracker.current.update(self)
    }
}
