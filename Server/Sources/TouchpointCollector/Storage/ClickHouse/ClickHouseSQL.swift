/// A ClickHouse statement, or a part of one, whose interpolated values are quoted by construction.
///
/// ClickHouse 18.16 has no bound parameters over HTTP, so a value travels inside the statement's
/// text. Here that text is built by string interpolation, as the dashboard's `HTML` escapes what
/// it interpolates: a `String` interpolated is printed as one string literal (quoted, with `\`,
/// `'` and NUL escaped), a number as a number, and another ``ClickHouseSQL`` as the text it holds.
/// Text that is SQL must say so: a fixed string literal is one already, a table's name is
/// interpolated as `\(identifier:)` (letters, digits and `_`, checked), and a fragment written by
/// code elsewhere as `\(raw:)`. So no call site can place an unquoted value by forgetting to
/// quote it.
///
/// ```swift
/// let name = "it's"
/// let sql: ClickHouseSQL = "SELECT count() FROM \(identifier: "events") WHERE event = \(name) LIMIT \(10)"
/// // SELECT count() FROM events WHERE event = 'it\'s' LIMIT 10
/// ```
struct ClickHouseSQL: Sendable, Hashable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The statement's text, as sent to ClickHouse.
    let text: String

    init(stringLiteral text: String) { self.text = text }

    init(stringInterpolation: StringInterpolation) { text = stringInterpolation.text }

    var description: String { text }

    /// The interpolations a statement accepts; any other type does not compile.
    struct StringInterpolation: StringInterpolationProtocol {
        fileprivate var text = ""

        init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + 16 * interpolationCount)
        }

        mutating func appendLiteral(_ literal: String) { text += literal }

        /// A value: one string literal, whatever it holds.
        mutating func appendInterpolation(_ value: String) { text += ClickHouseSQL.literal(value) }

        /// Values as string literals separated by `, ` (nothing for none): for `IN (…)` and `[…]`.
        mutating func appendInterpolation(list values: [String]) {
            text += values.map(ClickHouseSQL.literal).joined(separator: ", ")
        }

        /// An integer, in decimal.
        mutating func appendInterpolation<Integer: BinaryInteger>(_ value: Integer) { text += String(value) }

        /// A floating-point number: `nan`, `inf` and `-inf` as ClickHouse names them, others as
        /// Swift prints them (`0.5`, `1e-07`), which ClickHouse reads back as the same `Float64`.
        mutating func appendInterpolation(_ value: Double) {
            text += value.isNaN ? "nan" : value.isInfinite ? (value > 0 ? "inf" : "-inf") : "\(value)"
        }

        /// Another statement or fragment, as it is: its values were quoted when it was made.
        mutating func appendInterpolation(_ fragment: ClickHouseSQL) { text += fragment.text }

        /// The name of a table, column or database, as it is.
        /// - Precondition: `name` is letters, digits and `_` (``ClickHouseURL/isIdentifier(_:)``).
        mutating func appendInterpolation(identifier name: String) {
            precondition(ClickHouseURL.isIdentifier(name), "a ClickHouse identifier is letters, digits and _")
            text += name
        }

        /// SQL text written by code, not a value (such as ``SourceCalendar/sqlIndex(_:_:from:to:quotient:)``'s
        /// expression, made of column names and numbers): printed as it is.
        mutating func appendInterpolation(raw fragment: String) { text += fragment }
    }

    /// `value` as a ClickHouse string literal: quoted, with `\`, `'` and NUL escaped; every other
    /// character (a newline, multi-byte text) as it is, which ClickHouse reads back as the same bytes.
    private static func literal(_ value: String) -> String {
        var quoted = "'"
        quoted.reserveCapacity(value.utf8.count + 2)
        for character in value.unicodeScalars {
            switch character {
            case "\\": quoted += "\\\\"
            case "'": quoted += "\\'"
            case "\0": quoted += "\\0"
            default: quoted.unicodeScalars.append(character)
            }
        }
        return quoted + "'"
    }
}

extension Sequence where Element == ClickHouseSQL {
    /// The fragments one after another, `separator` between each two.
    func joined(separator: ClickHouseSQL) -> ClickHouseSQL {
        ClickHouseSQL(stringLiteral: map(\.text).joined(separator: separator.text))
    }
}
