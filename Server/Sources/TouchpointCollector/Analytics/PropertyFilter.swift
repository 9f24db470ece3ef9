import Foundation
import TouchpointCore

/// A condition on an event's property or on its person's trait: `plan = pro`, `amount > 10`,
/// `person.company is set`.
///
/// A value is compared as the analytics show it (``SQLDialect/analyticsPropertyText(_:)``): text
/// as it is, by its bytes (a composed and a decomposed "é" differ), booleans as `true` and
/// `false`, numbers as their JSON. `≠` also matches where the property is absent; `contains`
/// ignores the case of ASCII letters only; `>` and `<` hold only for JSON numbers; `is set` means
/// present and not null. A person's trait is the value of their newest `identify` call that
/// carried it (merged as the people pages merge them).
///
/// Trends take filters as `where.N.property`, `where.N.op` and `where.N.value` (``Operator``'s raw
/// values); funnels, paths and cohorts as text, `plan=pro;amount>10` (``parse(_:)``). This meaning
/// is the one definition; it is printed three ways: for SQLite and PostgreSQL by
/// ``SQLStatement/appendFilter(_:source:)`` (the conditions' words in `SQLDialect+Properties.swift`,
/// values bound), for ClickHouse by ``ClickHouseInsights/condition(_:)`` (values quoted by
/// ``ClickHouseSQL``), and in Swift by ``matches(_:)`` (a cohort's traits). The brute-force suites
/// and `HostileValuesTests` hold the three to the same answers.
public struct PropertyFilter: Sendable, Hashable, CustomStringConvertible {
    /// Whose value is compared.
    public enum Scope: String, Sendable, Hashable {
        /// A key of the event's `properties`.
        case event
        /// A key of the person's `traits`.
        case person
    }

    /// How the value is compared. The raw value is the `where.N.op` parameter's.
    public enum Operator: String, Sendable, Hashable, CaseIterable {
        /// The same text.
        case equals = "eq"
        /// Not the same text, or not set.
        case notEquals = "ne"
        /// Holds the text, ASCII letters' case ignored.
        case contains
        /// A number above the value.
        case greaterThan = "gt"
        /// A number below the value.
        case lessThan = "lt"
        /// Set to anything but null.
        case isSet = "set"

        /// The sign in the text form (``PropertyFilter/parse(_:)``): `=`, `!=`, `~`, `>`, `<`, `?`.
        public var sign: String {
            switch self {
            case .equals: "="
            case .notEquals: "!="
            case .contains: "~"
            case .greaterThan: ">"
            case .lessThan: "<"
            case .isSet: "?"
            }
        }

        /// The name in a cohort's JSON: `=`, `!=`, `contains`, `>`, `<`, `is set`.
        public var name: String {
            switch self {
            case .contains: "contains"
            case .isSet: "is set"
            default: sign
            }
        }

        /// How the dashboard writes it: `=`, `≠`, `contains`, `>`, `<`, `is set`.
        public var symbol: String { self == .notEquals ? "≠" : name }

        /// The operator called `name`: its raw value, ``name``, ``sign`` or ``symbol``.
        public init?(name: String) {
            guard
                let found = Self.allCases.first(where: {
                    name == $0.rawValue || name == $0.name || name == $0.sign || name == $0.symbol
                })
            else { return nil }
            self = found
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
    /// What with (empty for ``Operator/isSet``).
    public var value: String

    /// A filter; `value` must be a number for `>` and `<` (see ``validated()``).
    public init(scope: Scope = .event, property: String, op: Operator, value: String = "") {
        self.scope = scope
        self.property = property
        self.op = op
        self.value = op == .isSet ? "" : value
    }

    /// The property as the `property` parameter names it: `person.` before a trait.
    public var qualifiedProperty: String { scope == .person ? "person.\(property)" : property }

    /// `plan=pro`, `person.age>30`, `coupon?`: the text form ``parse(_:)`` reads.
    public var description: String {
        op == .isSet ? qualifiedProperty + "?" : qualifiedProperty + op.sign + value
    }

    /// `plan = pro`, `person.age > 30`, `coupon is set`: as the dashboard shows it.
    public var label: String {
        op == .isSet ? "\(qualifiedProperty) is set" : "\(qualifiedProperty) \(op.symbol) \(value)"
    }

    /// The value as a number, for ``Operator/greaterThan`` and ``Operator/lessThan``.
    var number: Double? { Double(value).flatMap { $0.isFinite ? $0 : nil } }

    var json: JSONValue {
        .object([
            "property": .string(qualifiedProperty), "op": .string(op.rawValue),
            "value": op == .isSet ? .null : .string(value),
        ])
    }

    /// Why a filter cannot be used, for a 400 that names it.
    public struct SyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong.
        public var message: String
        public var description: String { message }
    }

    static let expected =
        "expected property=value, property!=value, property~text, property>number, property<number or property?"

    /// Reads `plan=pro`, `plan!=pro`, `plan≠pro`, `plan~pro`, `amount>10`, `amount<10` or `plan?`;
    /// `person.plan=pro` compares the person's trait.
    /// - Throws: ``SyntaxError`` saying what was expected.
    public static func parse(_ text: String) throws(SyntaxError) -> PropertyFilter {
        var scalars = Substring(text).unicodeScalars[...]
        var scope = Scope.event
        if text.hasPrefix("person.") {
            scope = .person
            scalars = scalars.dropFirst("person.".count)
        }
        let name = scalars.prefix(while: Self.isNameScalar)
        let property = String(String.UnicodeScalarView(name))
        guard PropertyName.isValid(property) else {
            throw SyntaxError(message: "\"\(text)\": \(expected) (a property is letters, digits and _, at most 64)")
        }
        let rest = String(String.UnicodeScalarView(scalars.dropFirst(name.count)))
        let signs: [(String, Operator)] = [
            ("!=", .notEquals), ("≠", .notEquals), ("=", .equals), ("~", .contains), (">", .greaterThan),
            ("<", .lessThan), ("?", .isSet),
        ]
        guard let (sign, op) = signs.first(where: { rest.hasPrefix($0.0) }) else {
            throw SyntaxError(message: "\"\(text)\": \(expected)")
        }
        if op == .isSet, rest != "?" { throw SyntaxError(message: "\"\(text)\": nothing may follow ?") }
        let filter = PropertyFilter(scope: scope, property: property, op: op, value: String(rest.dropFirst(sign.count)))
        return try filter.validated()
    }

    /// Reads filters separated by `;` (`plan=pro;amount>10`).
    public static func parseList(_ text: String) throws(SyntaxError) -> [PropertyFilter] {
        var filters: [PropertyFilter] = []
        for part in text.split(separator: ";", omittingEmptySubsequences: true) {
            filters.append(try parse(String(part)))
        }
        return filters
    }

    /// The filter, when it can be used: a property name, a number for `>` and `<`, a value of at
    /// most 200 bytes.
    public func validated() throws(SyntaxError) -> PropertyFilter {
        guard PropertyName.isValid(property) else {
            throw SyntaxError(message: "\"\(property)\": a property is letters, digits and _, at most 64")
        }
        if op.isNumeric, number == nil {
            throw SyntaxError(message: "\"\(description)\": \(op.sign) compares with a number")
        }
        guard value.utf8.count <= 200 else {
            throw SyntaxError(message: "\"\(property)\": a value of at most 200 bytes")
        }
        return self
    }

    /// Whether a value (nil: absent) meets the filter.
    public func matches(_ found: JSONValue?) -> Bool {
        let text = found.flatMap(Self.text)
        switch op {
        // Text by its bytes, as every store compares it (Swift's `==` and `contains` take a composed
        // and a decomposed "é" as equal).
        case .equals: return text.map { ExactText($0) == ExactText(value) } ?? false
        case .notEquals: return text.map { ExactText($0) != ExactText(value) } ?? true
        case .contains:
            return text.map { Array(Self.folded($0).utf8).firstRange(of: Array(Self.folded(value).utf8)) != nil }
                ?? false
        case .greaterThan, .lessThan:
            guard let number, let found, case let amount? = Self.numeric(found) else { return false }
            return op == .greaterThan ? amount > number : amount < number
        case .isSet: return text != nil
        }
    }

    /// A JSON value as the analytics compare it as text (nil for null).
    static func text(_ value: JSONValue) -> String? {
        switch value {
        case .null: nil
        case .string(let text): text
        case .bool(let flag): flag ? "true" : "false"
        default: value.jsonString()
        }
    }

    /// A JSON number's value; nil for every other type.
    static func numeric(_ value: JSONValue) -> Double? {
        switch value {
        case .int(let number): Double(number)
        case .double(let number): number
        default: nil
        }
    }

    /// A letter, digit or `_`: what a property name is made of.
    static func isNameScalar(_ scalar: Unicode.Scalar) -> Bool {
        (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z") || (scalar >= "0" && scalar <= "9")
            || scalar == "_"
    }

    /// `text` with ASCII capitals made small (what SQLite's `lower` does).
    static func folded(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { $0 >= "A" && $0 <= "Z" ? Unicode.Scalar($0.value + 32)! : $0 }))
    }
}
