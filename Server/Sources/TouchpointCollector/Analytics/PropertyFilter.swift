import TouchpointCore

/// A condition on an event's property or on its person's trait: `plan = pro`, `amount > 10`,
/// `person.company is set`.
///
/// A property is compared as the analytics show it (``SQLDialect/analyticsPropertyText(_:)``):
/// strings as they are, booleans as `true` and `false`, numbers as their JSON. `>` and `<` compare
/// numbers only (a property that holds a string never matches them). A person's trait is the value
/// of their newest `identify` call that carried it (merged as the people pages merge them): their
/// user id's calls and those of the anonymous ids merged into it.
public struct PropertyFilter: Sendable, Hashable, CustomStringConvertible {
    /// Whose value is compared.
    public enum Scope: String, Sendable, Hashable {
        /// A key of the event's `properties`.
        case event
        /// A key of the person's `traits`.
        case person
    }

    /// How the value is compared.
    public enum Operator: String, Sendable, Hashable, CaseIterable {
        /// The same text.
        case equals = "eq"
        /// Not the same text, or not set.
        case notEquals = "ne"
        /// Holds the text (case-sensitive).
        case contains
        /// A number above the value.
        case greaterThan = "gt"
        /// A number below the value.
        case lessThan = "lt"
        /// Set to anything but null.
        case isSet = "set"

        /// How the dashboard writes it.
        public var symbol: String {
            switch self {
            case .equals: "="
            case .notEquals: "≠"
            case .contains: "contains"
            case .greaterThan: ">"
            case .lessThan: "<"
            case .isSet: "is set"
            }
        }

        /// Whether it compares numbers (its value must be one).
        var isNumeric: Bool { self == .greaterThan || self == .lessThan }
    }

    /// Whose value is compared.
    public var scope: Scope
    /// The property or trait (a ``PropertyName``).
    public var property: String
    /// How.
    public var op: Operator
    /// What with (nil for ``Operator/isSet``).
    public var value: String?

    /// Creates a filter.
    public init(scope: Scope = .event, property: String, op: Operator, value: String? = nil) {
        self.scope = scope
        self.property = property
        self.op = op
        self.value = value
    }

    /// The property as the `property` parameter names it: `person.` before a trait.
    public var qualifiedProperty: String { scope == .person ? "person.\(property)" : property }

    /// `plan = pro`, `person.age > 30`, `coupon is set`.
    public var description: String {
        [qualifiedProperty, op.symbol, value].compactMap { $0 }.joined(separator: " ")
    }

    /// The value as a number, for ``Operator/greaterThan`` and ``Operator/lessThan``.
    var number: Double? { value.flatMap(Double.init) }

    var json: JSONValue {
        .object([
            "property": .string(qualifiedProperty), "op": .string(op.rawValue),
            "value": value.map(JSONValue.string) ?? .null,
        ])
    }
}
