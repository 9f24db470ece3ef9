/// How the analytics read a property or a trait in each database, and the conditions of a
/// ``PropertyFilter``.
extension SQLDialect {
    /// A property of an `events` row's `properties` as a number: NULL unless it is a JSON number.
    /// `property` must be a ``PropertyName``.
    func analyticsPropertyNumber(_ property: String) -> String {
        switch self {
        case .sqlite: return sqliteNumber("payload", propertyPath(property))
        case .postgres: return postgresNumber(postgresMember("payload", ["properties", property]))
        }
    }

    /// A trait of an `identify` row aliased `alias` as the analytics compare it (text, booleans as
    /// `true` and `false`, NULL when absent or null), as ``analyticsPropertyText(_:)`` reads a property.
    func traitText(_ trait: String, of alias: String) -> String {
        switch self {
        case .sqlite:
            let path = "'$.traits.\(trait)'"
            return
                "(CASE json_type(\(alias).payload, \(path)) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE CAST(json_extract(\(alias).payload, \(path)) AS TEXT) END)"
        case .postgres: return jsonText("\(alias).payload", ["traits", trait])
        }
    }

    /// A trait of an `identify` row aliased `alias` as a number (NULL unless a JSON number).
    func traitNumber(_ trait: String, of alias: String) -> String {
        switch self {
        case .sqlite: return sqliteNumber("\(alias).payload", "'$.traits.\(trait)'")
        case .postgres: return postgresNumber(postgresMember("\(alias).payload", ["traits", trait]))
        }
    }

    /// Whether an `identify` row aliased `alias` carries the trait (null included: it replaces an
    /// earlier value).
    func carriesTrait(_ trait: String, of alias: String) -> String {
        switch self {
        case .sqlite: return "json_type(\(alias).payload, '$.traits.\(trait)') IS NOT NULL"
        case .postgres: return "\(postgresMember("\(alias).payload", ["traits", trait])) IS NOT NULL"
        }
    }

    /// Appends `filter`'s condition on a value read as `text` (``analyticsPropertyText(_:)``) and
    /// as `number` (``analyticsPropertyNumber(_:)``).
    func appendCondition(
        _ filter: PropertyFilter, text: String, number: String, to statement: inout SQLStatement
    ) {
        switch filter.op {
        case .equals:
            statement.append("\(text) = ")
            statement.bind(.text(filter.value))
        case .notEquals:
            statement.append("(\(text) IS NULL OR \(text) <> ")
            statement.bind(.text(filter.value))
            statement.append(")")
        case .contains:
            statement.append(self == .sqlite ? "instr(" : "strpos(")
            statement.append("\(asciiLowercased(text)), ")
            statement.bind(.text(PropertyFilter.folded(filter.value)))
            statement.append(") > 0")
        case .greaterThan, .lessThan:
            statement.append("\(number) \(filter.op == .greaterThan ? ">" : "<") ")
            statement.bind(.double(filter.number ?? 0))
        case .isSet:
            statement.append("\(text) IS NOT NULL")
        }
    }

    /// `text` with the ASCII capitals made small, and nothing else (SQLite's `lower` does only
    /// that; PostgreSQL's follows the database's locale).
    func asciiLowercased(_ text: String) -> String {
        switch self {
        case .sqlite: "lower(\(text))"
        case .postgres: "translate(\(text), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
        }
    }

    /// The sum of a numeric column over a group (0 over no rows on SQLite, as `TOTAL`).
    func sum(of column: String) -> String {
        switch self {
        case .sqlite: "TOTAL(\(column))"
        case .postgres: "SUM(\(column))"
        }
    }

    /// The continuous percentile `fraction` of a numeric column over a group (interpolated
    /// between the two nearest values, as PostgreSQL's `percentile_cont`; SQLite's is the
    /// collector's own function, ``SQLitePercentile``).
    func percentile(_ fraction: Double, of column: String) -> String {
        switch self {
        case .sqlite: return "touchpoint_percentile(\(column), \(fraction))"
        case .postgres: return "percentile_cont(\(fraction)) WITHIN GROUP (ORDER BY \(column))"
        }
    }

    private func sqliteNumber(_ column: String, _ path: String) -> String {
        "(CASE WHEN json_type(\(column), \(path)) IN ('integer', 'real') THEN json_extract(\(column), \(path)) END)"
    }

    /// PostgreSQL: the member at `path` of a JSON text column, as `json` (SQL NULL when absent).
    private func postgresMember(_ column: String, _ path: [String]) -> String {
        "((\(Self.readableJSON(column)))::json #> '{\(path.joined(separator: ","))}')"
    }

    private func postgresNumber(_ member: String) -> String {
        "(CASE WHEN json_typeof(\(member)) = 'number' THEN (\(member) #>> '{}')::double precision END)"
    }
}
