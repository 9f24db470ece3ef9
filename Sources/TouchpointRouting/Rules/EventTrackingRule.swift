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
    /// Whether the listed events are the only ones allowed or the ones prohibited.
    public let rule: TrackingRule
    /// The listed event types.
    public let types: Set<ObjectIdentifier>
    /// The listed event names.
    public let names: Set<String>

    /// Creates a rule.
    /// - Parameters:
    ///   - rule: ``TrackingRule/allow`` or ``TrackingRule/prohibit``.
    ///   - types: event types, e.g. `[Events.App.Opened.self]`.
    ///   - names: event names, e.g. `["App: Opened", "checkout_success"]`.
    public init(_ rule: TrackingRule, types: [any TrackableEvent.Type] = [], names: [String] = []) {
        self.rule = rule
        self.types = Set(types.map { ObjectIdentifier($0) })
        self.names = Set(names)
    }

    /// Whether an adapter with this rule receives `event`.
    public func allows(_ event: any TrackableEvent) -> Bool {
        let listed =
            types.contains(ObjectIdentifier(type(of: event)))
            || (!names.isEmpty && names.contains(event.identifier.stringValue))
        return listed == (rule == .allow)
    }
}
