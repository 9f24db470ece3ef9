import TouchpointCore

extension SQLStatement {
    /// Appends ` AND expression IN (the values)`, the values bound as one: a JSON array read by
    /// `json_each` (SQLite), an array (PostgreSQL). One value however many people a cohort holds
    /// or names a store has seen, where a list of placeholders would meet the databases' limits.
    mutating func appendIsIn(_ expression: String, _ values: some Collection<Int64>) {
        let sorted = values.sorted()
        appendIsIn(
            expression, json: "[" + sorted.map(String.init).joined(separator: ",") + "]", array: .intArray(sorted),
            type: "bigint")
    }

    /// Appends ` AND expression IN (the texts)`, bound as one value.
    mutating func appendIsIn(_ expression: String, _ texts: [String]) {
        appendIsIn(
            expression, json: JSONValue.array(texts.map(JSONValue.string)).jsonString(), array: .textArray(texts),
            type: "text")
    }

    private mutating func appendIsIn(_ expression: String, json: String, array: SQLValue, type: String) {
        switch dialect {
        case .sqlite:
            append(" AND \(expression) IN (SELECT value FROM json_each(")
            bind(.text(json))
            append("))")
        case .postgres:
            append(" AND \(expression) = ANY(")
            bind(array)
            append("::\(type)[])")
        }
    }
}
