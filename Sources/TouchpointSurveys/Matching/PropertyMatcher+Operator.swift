import TouchpointCore

extension PropertyMatcher {
    /// A comparison operator, spelled in JSON as its raw value (`"gte"`, `"notContains"`, …).
    public enum Operator: String, Sendable, Hashable, CaseIterable {
        /// Equal (the shorthand form means this).
        case eq
        /// Not equal; matches a missing property.
        case ne
        /// Greater than (numbers).
        case gt
        /// Greater than or equal (numbers).
        case gte
        /// Less than (numbers).
        case lt
        /// Less than or equal (numbers).
        case lte
        /// Contains a substring (strings) or an element (arrays).
        case contains
        /// Does not contain; matches a missing property.
        case notContains
        /// The property is present.
        case exists
        /// The property is absent.
        case notExists

        /// Whether the operator takes a `value`.
        public var takesValue: Bool { self != .exists && self != .notExists }

        /// What kinds of `value` the operator accepts, for error messages.
        var expectedValue: String {
            switch self {
            case .eq, .ne: return "a string, number or boolean"
            case .gt, .gte, .lt, .lte: return "a number"
            case .contains, .notContains: return "a string"
            case .exists, .notExists: return "no value"
            }
        }

        /// Whether `value` is a valid operand for the operator.
        func accepts(_ value: JSONValue) -> Bool {
            switch (self, value) {
            case (.eq, .string), (.eq, .int), (.eq, .double), (.eq, .bool),
                (.ne, .string), (.ne, .int), (.ne, .double), (.ne, .bool):
                return true
            case (.gt, .int), (.gt, .double), (.gte, .int), (.gte, .double),
                (.lt, .int), (.lt, .double), (.lte, .int), (.lte, .double):
                return true
            case (.contains, .string), (.notContains, .string):
                return true
            default:
                return false
            }
        }
    }
}
