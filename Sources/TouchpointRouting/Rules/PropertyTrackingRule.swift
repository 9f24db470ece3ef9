/// Which properties an adapter receives: only the listed ones (``TrackingRule/allow``) or all
/// but the listed ones (``TrackingRule/prohibit``).
///
/// ```swift
/// let propertyTrackingRule: PropertyTrackingRule? = PropertyTrackingRule(.allow, types: [Email.self])
/// ```
///
/// Properties are listed by type (for typed properties) or by name
/// (``TrackableProperty/identifier``, which also matches traits recorded untyped, as
/// ``RecordedProperty``).
public struct PropertyTrackingRule: Sendable, Hashable {
    private let list: RuleList

    /// Whether the listed properties are the only ones allowed or the ones prohibited.
    public var rule: TrackingRule { list.rule }
    /// The listed property types.
    public var types: Set<ObjectIdentifier> { list.types }
    /// The listed property names.
    public var names: Set<String> { list.names }

    /// Creates a rule.
    /// - Parameters:
    ///   - rule: ``TrackingRule/allow`` or ``TrackingRule/prohibit``.
    ///   - types: property types, e.g. `[Email.self]`.
    ///   - names: property identifiers, e.g. `["email"]`.
    public init(_ rule: TrackingRule, types: [any TrackableProperty.Type] = [], names: [String] = []) {
        list = RuleList(rule, types: types, names: names)
    }

    /// Whether an adapter with this rule receives `property`.
    public func allows(_ property: any TrackableProperty) -> Bool {
        list.allows(type(of: property)) { property.identifier }
    }
}
