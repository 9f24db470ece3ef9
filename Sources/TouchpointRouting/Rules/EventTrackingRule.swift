/// Which events an adapter receives: only the listed ones (``TrackingRule/allow``) or all but
/// the listed ones (``TrackingRule/prohibit``).
///
/// ```swift
/// class MixpanelAdapter: AnalyticsAdapter {
///     let eventTrackingRule: EventTrackingRule? = EventTrackingRule(.prohibit, types: [AppOpen.self])
///     …
/// }
/// ```
///
/// Events are listed by type (for typed events) or by name (``EventIdentifier/stringValue``,
/// which matches typed events and events recorded untyped through
/// ``EventRecorder/record(_:properties:type:attachment:)`` alike). A type does not match an
/// untyped event of the same name: name it too if both doors are used.
///
/// Declare the adapter's property with the optional type, `EventTrackingRule?`, as above: a
/// property of type `EventTrackingRule` does not satisfy the requirement.
public struct EventTrackingRule: Sendable, Hashable {
    private let list: RuleList

    /// Whether the listed events are the only ones allowed or the ones prohibited.
    public var rule: TrackingRule { list.rule }
    /// The listed event types.
    public var types: Set<ObjectIdentifier> { list.types }
    /// The listed event names.
    public var names: Set<String> { list.names }

    /// Creates a rule.
    /// - Parameters:
    ///   - rule: ``TrackingRule/allow`` or ``TrackingRule/prohibit``.
    ///   - types: event types, e.g. `[Events.App.Opened.self]`.
    ///   - names: event names, e.g. `["App: Opened", "checkout_success"]`.
    public init(_ rule: TrackingRule, types: [any TrackableEvent.Type] = [], names: [String] = []) {
        list = RuleList(rule, types: types, names: names)
    }

    /// Whether an adapter with this rule receives `event`.
    public func allows(_ event: any TrackableEvent) -> Bool {
        list.allows(type(of: event)) { event.identifier.stringValue }
    }
}
