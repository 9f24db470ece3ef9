import TouchpointEvents

/// One recorded event waiting for the adapters, with the typed value it was triggered with.
enum DeliveryItem: Sendable {
    /// A `track` (or `screen`, …) event; typed when it came through ``TrackableEvent/trigger()``.
    case event(Event, TypedEventBox?)
    /// An `identify` event from ``TrackableProperty/update()``.
    case property(Event, TypedPropertyBox)
    /// An `identify` event recorded untyped: each trait goes to the adapters as a
    /// ``RecordedProperty``.
    case traits(Event)
    /// The recorder started a new anonymous user or deleted its data: each adapter forgets the
    /// user (``AnalyticsAdapter/reset()``), in log order.
    case reset

    /// Whether the item is an event or property (counted in ``RoutingStatistics/received``).
    var isRecorded: Bool {
        if case .reset = self { return false }
        return true
    }
}

/// Carries a typed event from ``TrackableEvent/trigger()`` through the recorder to the lanes.
final class TypedEventBox: @unchecked Sendable {
    // Safe: `event` is a `let` that nothing mutates after `trigger()` boxed its own copy; the
    // lanes only read it. Events are documented to be values (structs of values), so concurrent
    // reads from several adapters' threads do not race.
    let event: any TrackableEvent

    init(_ event: any TrackableEvent) { self.event = event }
}

/// Carries a typed property from ``TrackableProperty/update()`` through the recorder to the
/// lanes.
final class TypedPropertyBox: @unchecked Sendable {
    // Safe: as for `TypedEventBox`, a `let` copy taken by `update()`, only read afterwards.
    let property: any TrackableProperty

    init(_ property: any TrackableProperty) { self.property = property }
}
