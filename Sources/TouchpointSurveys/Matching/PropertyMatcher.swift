import TouchpointCore

/// A condition on one event property: an operator and, for most operators, a value.
///
/// JSON: a plain value is shorthand for equality (`"plan": "pro"`, `"count": 3`), or an
/// operator object (`{"op": "gt", "value": 50}`, `{"op": "exists"}`).
///
/// What each operator does (all string comparisons are case-sensitive; numbers, integer or
/// not, are compared as `Double`, so `3` equals `3.0`):
///
/// | operator | matches when the property… | when it is missing |
/// | --- | --- | --- |
/// | `eq` | has the same type (string, number, boolean) and value | no match |
/// | `ne` | is anything `eq` would not match (another value or another type) | **match** |
/// | `gt` `gte` `lt` `lte` | is a number and compares so with the value | no match |
/// | `contains` | is a string containing the value, or an array with an element equal to it | no match |
/// | `notContains` | is anything `contains` would not match | **match** |
/// | `exists` | is present, whatever its value (`null` included) | no match |
/// | `notExists` | is absent | **match** |
///
/// `ne` and `notContains` are the exact negations of `eq` and `contains`: for any event exactly
/// one of each pair matches. A missing property is therefore "not equal" and "does not
/// contain"; to require the property as well, test it with `exists` in another rule, or send
/// it always. A number never equals a string (`3` ≠ `"3"`) and an ordering operator never
/// matches a string.
public struct PropertyMatcher: Sendable, Hashable {
    /// The comparison.
    public var op: Operator
    /// The value compared against; nil for `exists` and `notExists`.
    public var value: JSONValue?

    /// Creates a matcher.
    /// - Parameters:
    ///   - op: the comparison.
    ///   - value: the value compared against (nil for `exists`/`notExists`).
    public init(_ op: Operator, _ value: JSONValue? = nil) {
        self.op = op
        self.value = value
    }

    /// `eq`: the property equals `value`.
    public static func equals(_ value: JSONValue) -> PropertyMatcher { PropertyMatcher(.eq, value) }
    /// `exists`: the property is present.
    public static let exists = PropertyMatcher(.exists)
    /// `notExists`: the property is absent.
    public static let notExists = PropertyMatcher(.notExists)

    /// Whether a property value (nil when the event does not have it) satisfies this matcher.
    public func matches(_ property: JSONValue?) -> Bool {
        switch op {
        case .exists: return property != nil
        case .notExists: return property == nil
        case .eq: return Self.equal(property, value)
        case .ne: return !Self.equal(property, value)
        case .contains: return Self.contains(property, value)
        case .notContains: return !Self.contains(property, value)
        case .gt, .gte, .lt, .lte:
            guard let left = property?.doubleValue, let right = value?.doubleValue else { return false }
            switch op {
            case .gt: return left > right
            case .gte: return left >= right
            case .lt: return left < right
            default: return left <= right
            }
        }
    }

    /// Equality of two scalars by this type's rules: same kind, numbers as `Double`.
    static func equal(_ property: JSONValue?, _ value: JSONValue?) -> Bool {
        guard let property, let value else { return false }
        switch (property, value) {
        case (.string(let left), .string(let right)): return left == right
        case (.bool(let left), .bool(let right)): return left == right
        default:
            guard let left = property.doubleValue, let right = value.doubleValue else { return false }
            return left == right
        }
    }

    static func contains(_ property: JSONValue?, _ value: JSONValue?) -> Bool {
        guard let needle = value?.stringValue else { return false }
        switch property {
        case .string(let text)?: return needle.isEmpty || text.contains(needle)
        case .array(let elements)?: return elements.contains(.string(needle))
        default: return false
        }
    }

    /// Why `value` fails this matcher, in words: `amount 40 is not gt 100`.
    func explainMismatch(key: String, value property: JSONValue?) -> String {
        let name = key.isEmpty ? "\"\"" : key
        guard let property else {
            return "\(name) is missing (\(op.rawValue)\(value.map { " " + $0.jsonString() } ?? ""))"
        }
        let shown = property.jsonString()
        switch op {
        case .exists: return "\(name) is present"  // unreachable: a present value exists
        case .notExists: return "\(name) is present (\(shown)), expected absent"
        default:
            return "\(name) \(shown) is not \(op.rawValue) \(value.map { $0.jsonString() } ?? "null")"
        }
    }
}
