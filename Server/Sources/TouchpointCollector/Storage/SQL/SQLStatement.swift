/// A statement under construction: SQL text with its bound values, numbered in the dialect's style.
struct SQLStatement {
    let dialect: SQLDialect
    private(set) var sql = ""
    private(set) var binds: [SQLValue] = []

    init(_ dialect: SQLDialect, _ sql: String = "") {
        self.dialect = dialect
        self.sql = sql
    }

    /// Appends SQL text.
    mutating func append(_ text: String) { sql += text }

    /// Appends a placeholder bound to `value`.
    mutating func bind(_ value: SQLValue) {
        binds.append(value)
        sql += dialect.placeholder(binds.count)
    }

    /// Appends `(?, ?, …)` bound to `values`.
    mutating func bindTuple(_ values: [SQLValue]) {
        sql += "("
        for (offset, value) in values.enumerated() {
            if offset > 0 { sql += ", " }
            bind(value)
        }
        sql += ")"
    }
}

extension SQLStatement {
    /// The statement with `binds` as its bound values (its text already numbers their placeholders).
    func withBinds(_ binds: [SQLValue]) -> SQLStatement {
        var copy = self
        copy.binds = binds
        return copy
    }
}
