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
    /// Whether the listed properties are the only ones allowed or the ones prohibited.
    public let rule: TrackingRule
    /// The listed property types.
    public let types: Set<ObjectIdentifier>
    /// The listed property names.
    public let names: Set<String>

    /// Creates a rule.
    /// - Parameters:
    ///   - rule: ``TrackingRule/allow`` or ``TrackingRule/prohibit``.
    ///   - types: property types, e.g. `[Email.self]`.
    ///   - names: property identifiers, e.g. `["email"]`.
    public init(_ rule: TrackingRule, types: [any TrackableProperty.Type] = [], names: [String] = []) {
        self.rule = rule
        self.types = Set(types.map { ObjectIdentifier($0) })
        self.names = Set(names)
    }

    /// Whether an adapter with this rule receives `property`.
    public func allows(_ property: any TrackableProperty) -> Bool {
        let listed =
            types.contains(ObjectIdentifier(type(of: property)))
            || (!names.isEmpty && names.contains(property.identifier))
        return listed == (rule == .allow)
    }
}
