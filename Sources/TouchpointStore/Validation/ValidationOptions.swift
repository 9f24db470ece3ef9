/// How a store checks what is written into it: a mode and a rule per key path.
///
/// Keys of ``schema`` are key paths and may hold wildcards: `"items[*].price"` applies to the
/// price of every item. A rule is checked whenever a write touches its path (writing `cart`
/// checks the rule for `cart.total`).
///
/// ```swift
/// store.configureValidation(.init(
///     mode: .strict,
///     schema: [
///         "cart.total": Rule(kind: .number, required: true, defaultValue: .number(0)),
///         "user.name": Rule(kind: .string, required: false, max: 40),
///     ]
/// ))
/// ```
public struct ValidationOptions: Sendable, Equatable {
    /// What happens to a write that breaks a rule.
    public enum Mode: Sendable, Hashable {
        /// The write is rejected, with a reason (``ValidationResult/failed(reason:)``).
        case strict
        /// The value is coerced (`"1"` → `1`, `"true"` → `true`, `2.0` → `2`, numbers clamped into
        /// `min...max`), or replaced by the rule's default; each fix is logged as a warning. A value
        /// that can be neither coerced nor defaulted is rejected as in strict mode.
        case lenient
    }

    /// What happens to a write that breaks a rule.
    public var mode: Mode
    /// The rules, by key path (patterns with `*` allowed).
    public var schema: [String: ValidationRule]

    /// Creates options.
    /// - Parameters:
    ///   - mode: strict (reject) or lenient (coerce or default); strict by default.
    ///   - schema: the rules by key path.
    public init(mode: Mode = .strict, schema: [String: ValidationRule] = [:]) {
        self.mode = mode
        self.schema = schema
    }
}
