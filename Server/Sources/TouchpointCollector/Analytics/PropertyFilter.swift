import Foundation
import TouchpointCore

/// A condition on one property of an event, or one trait of a person: `plan=pro`, `plan!=pro`
/// (or `plan≠pro`), `plan~pro` (contains), `amount>10`, `amount<10`, `plan?` (is set).
///
/// A value is compared as the analytics show it: text as it is, `true` and `false` for booleans,
/// numbers as written. `≠` also matches where the property is absent; `contains` ignores the case
/// of ASCII letters; `>` and `<` hold only for JSON numbers; `is set` means present and not null.
/// Events are filtered in SQL (`PropertyFilterSQL`); traits, which are merged from several calls,
/// here (``matches(_:)``).
public struct PropertyFilter: Sendable, Hashable, CustomStringConvertible {
    /// How a filter compares.
    public enum Operator: String, Sendable, Hashable, CaseIterable {
        case equals = "="
        case notEquals = "!="
        case contains = "~"
        case greaterThan = ">"
        case lessThan = "<"
        case isSet = "?"

        /// The name in JSON and on the dashboard: `=`, `!=`, `contains`, `>`, `<`, `is set`.
        public var name: String {
            switch self {
            case .contains: "contains"
            case .isSet: "is set"
            default: rawValue
            }
        }

        /// The operator named `name` (its ``name``, its symbol, or `≠`).
        public init?(name: String) {
            switch name {
            case "contains": self = .contains
            case "is set", "set": self = .isSet
            case "≠": self = .notEquals
            default: self.init(rawValue: name)
            }
        }

        /// The operator's sign on the dashboard.
        var label: String { self == .notEquals ? "≠" : name }
    }

    /// The property (letters, digits and `_`; see ``PropertyName``).
    public var property: String
    /// The comparison.
    public var comparison: Operator
    /// The value compared with (empty for ``Operator/isSet``).
    public var value: String

    /// A filter; `value` must be a number for `>` and `<` (see ``validated()``).
    public init(property: String, comparison: Operator, value: String = "") {
        self.property = property
        self.comparison = comparison
        self.value = comparison == .isSet ? "" : value
    }

    /// `plan=pro`, as ``parse(_:)`` reads it.
    public var description: String { comparison == .isSet ? property + "?" : property + comparison.rawValue + value }

    /// The value as a number, for `>` and `<`.
    var number: Double? { Double(value).flatMap { $0.isFinite ? $0 : nil } }

    /// Why a filter cannot be used, for a 400 that names it.
    public struct SyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong.
        public var message: String
        public var description: String { message }
    }

    static let expected =
        "expected property=value, property!=value, property~text, property>number, property<number or property?"

    /// Reads `plan=pro`, `plan!=pro`, `plan≠pro`, `plan~pro`, `amount>10`, `amount<10` or `plan?`.
    /// - Throws: ``SyntaxError`` saying what was expected.
    public static func parse(_ text: String) throws(SyntaxError) -> PropertyFilter {
        let scalars = Array(text.unicodeScalars)
        var end = 0
        while end < scalars.count, Self.isNameScalar(scalars[end]) { end += 1 }
        let property = String(String.UnicodeScalarView(scalars[..<end]))
        guard PropertyName.isValid(property) else {
            throw SyntaxError(message: "\"\(text)\": \(expected) (a property is letters, digits and _, at most 64)")
        }
        let rest = String(String.UnicodeScalarView(scalars[end...]))
        let signs: [(String, Operator)] = [
            ("!=", .notEquals), ("≠", .notEquals), ("=", .equals), ("~", .contains), (">", .greaterThan),
            ("<", .lessThan), ("?", .isSet),
        ]
        guard let (sign, comparison) = signs.first(where: { rest.hasPrefix($0.0) }) else {
            throw SyntaxError(message: "\"\(text)\": \(expected)")
        }
        let filter = PropertyFilter(
            property: property, comparison: comparison, value: String(rest.dropFirst(sign.count)))
        if comparison == .isSet, rest != "?" { throw SyntaxError(message: "\"\(text)\": nothing may follow ?") }
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

    /// The filter, when it can be used: a property name, and a number for `>` and `<`.
    public func validated() throws(SyntaxError) -> PropertyFilter {
        guard PropertyName.isValid(property) else {
            throw SyntaxError(message: "\"\(property)\": a property is letters, digits and _, at most 64")
        }
        if comparison == .greaterThan || comparison == .lessThan, number == nil {
            throw SyntaxError(message: "\"\(description)\": \(comparison.rawValue) compares with a number")
        }
        guard value.utf8.count <= 200 else {
            throw SyntaxError(message: "\"\(property)\": a value of at most 200 bytes")
        }
        return self
    }

    /// Whether a value (nil: absent) meets the filter.
    public func matches(_ found: JSONValue?) -> Bool {
        let text = found.flatMap(Self.text)
        switch comparison {
        case .equals: return text == value
        case .notEquals: return text != value
        case .contains: return text.map { Self.folded($0).contains(Self.folded(value)) } ?? false
        case .greaterThan, .lessThan:
            guard let number, let found, case let amount? = Self.numeric(found) else { return false }
            return comparison == .greaterThan ? amount > number : amount < number
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
