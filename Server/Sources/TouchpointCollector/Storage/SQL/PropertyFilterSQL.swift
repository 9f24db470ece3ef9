/// A ``PropertyFilter`` on an `events` row's properties, as SQL both databases run: the one place
/// where a filter becomes a condition, so that every insight filters alike.
enum PropertyFilterSQL {
    /// Appends ` AND (condition)` for each filter.
    static func appendConditions(_ filters: [PropertyFilter], to statement: inout SQLStatement) {
        for filter in filters {
            statement.append(" AND ")
            appendCondition(filter, to: &statement)
        }
    }

    /// Appends the condition of `filters` all holding (`1 = 1` when there are none), in parentheses.
    static func appendAll(_ filters: [PropertyFilter], to statement: inout SQLStatement) {
        statement.append("(1 = 1")
        appendConditions(filters, to: &statement)
        statement.append(")")
    }

    /// Appends one filter's condition, in parentheses. The property must be a ``PropertyName``
    /// (``PropertyFilter/validated()``): it is written into the SQL as part of a JSON path.
    static func appendCondition(_ filter: PropertyFilter, to statement: inout SQLStatement) {
        let dialect = statement.dialect
        let text = dialect.analyticsPropertyText(filter.property)
        switch filter.comparison {
        case .equals:
            statement.append("(\(text) = ")
            statement.bind(.text(filter.value))
            statement.append(")")
        case .notEquals:
            statement.append("(\(text) IS NULL OR \(text) <> ")
            statement.bind(.text(filter.value))
            statement.append(")")
        case .contains:
            statement.append("(\(dialect.substringPosition)(\(dialect.asciiLowercased(text)), ")
            statement.bind(.text(PropertyFilter.folded(filter.value)))
            statement.append(") > 0)")
        case .greaterThan, .lessThan:
            statement.append("(\(dialect.analyticsPropertyNumber(filter.property)) \(filter.comparison.rawValue) ")
            statement.bind(.double(filter.number ?? 0))
            statement.append(")")
        case .isSet:
            statement.append("(\(text) IS NOT NULL)")
        }
    }
}

extension SQLDialect {
    /// A property of an `events` row's `properties` as a number when it is a JSON number, else NULL.
    /// `property` must be a ``PropertyName``.
    func analyticsPropertyNumber(_ property: String) -> String {
        switch self {
        case .sqlite:
            let path = propertyPath(property)
            return
                "(CASE WHEN json_type(payload, \(path)) IN ('integer', 'real') THEN json_extract(payload, \(path)) END)"
        case .postgres:
            let json = Self.readableJSON("payload")
            return
                "(CASE WHEN json_typeof(\(json) #> '{properties,\(property)}') = 'number' THEN (\(json) #>> '{properties,\(property)}')::float8 END)"
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

    /// The function giving where a needle first occurs in a text, from 1, or 0: `f(text, needle)`.
    var substringPosition: String { self == .sqlite ? "instr" : "strpos" }
}
