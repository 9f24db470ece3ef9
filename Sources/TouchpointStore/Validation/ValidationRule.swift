/// What one key path may hold.
///
/// - ``kind``: the value's case. `.number` also accepts integers (every integer is a number);
///   `.color` needs `#RGB`, `#RGBA`, `#RRGGBB` or `#RRGGBBAA` hex; `.url` needs a URL with a scheme.
/// - ``required``: the path must hold a value other than null. A required rule with a default
///   is filled in when validation is configured and whenever the value goes missing.
/// - ``min`` / ``max``: for numbers the value; for strings the number of characters; for arrays
///   the number of elements; for objects the number of members. Bounds are inclusive.
/// - ``pattern``: a regular expression (`NSRegularExpression` syntax) that the whole text of a
///   string, color or URL must match.
///
/// A path without a rule accepts anything; a rule that is not required accepts null.
public struct ValidationRule: Sendable, Codable, Equatable {
    /// The kinds of value a rule can ask for, one per ``StoreValue`` case (null aside).
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case string, number, integer, bool, color, url, array, object
    }

    /// The value's case.
    public var kind: Kind
    /// Whether the path must hold a non-null value.
    public var required: Bool
    /// The value written when one is missing or (in lenient mode) cannot be coerced.
    public var defaultValue: StoreValue?
    /// The inclusive lower bound (value for numbers, length for strings, arrays and objects).
    public var min: Double?
    /// The inclusive upper bound (value for numbers, length for strings, arrays and objects).
    public var max: Double?
    /// A regular expression the whole text must match (strings, colors, URLs).
    public var pattern: String?

    /// Creates a rule.
    /// - Parameters:
    ///   - kind: the value's case.
    ///   - required: whether the path must hold a non-null value (default: no).
    ///   - defaultValue: the value to use when one is missing or cannot be coerced.
    ///   - min: the inclusive lower bound.
    ///   - max: the inclusive upper bound.
    ///   - pattern: a regular expression the whole text must match.
    public init(
        kind: Kind, required: Bool = false, defaultValue: StoreValue? = nil, min: Double? = nil, max: Double? = nil,
        pattern: String? = nil
    ) {
        self.kind = kind
        self.required = required
        self.defaultValue = defaultValue
        self.min = min
        self.max = max
        self.pattern = pattern
    }
}

/// The seed's short name for ``ValidationRule``: `"cart.total": Rule(kind: .number, required: true)`.
public typealias Rule = ValidationRule
