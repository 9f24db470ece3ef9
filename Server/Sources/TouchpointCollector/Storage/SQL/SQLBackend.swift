/// A database connection (or pool) that runs SQL: the only part that differs between SQLite and
/// PostgreSQL. ``SQLCollectorStorage`` holds all the storage logic on top of it.
protocol SQLBackend: Sendable {
    /// Which SQL the backend speaks.
    var dialect: SQLDialect { get }

    /// Runs one read statement outside any transaction.
    func query(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow]

    /// Runs one write statement on its own (atomic by itself), in turn with write transactions.
    func writeStatement(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow]

    /// Runs `body` in one write transaction: committed when it returns, rolled back when it throws.
    func write<Result: Sendable>(
        _ body: @Sendable (any SQLTransaction) async throws -> Result
    ) async throws -> Result

    /// Runs `body` while holding the schema lock (across processes for PostgreSQL), for migrations.
    func withSchemaLock<Result: Sendable>(
        _ body: @Sendable (any SQLTransaction) async throws -> Result
    ) async throws -> Result

    /// Releases the connections.
    func close() async throws
}

extension SQLBackend {
    func query(_ statement: SQLStatement) async throws -> [SQLRow] {
        try await query(statement.sql, statement.binds)
    }
}

/// A connection inside an open transaction.
protocol SQLTransaction: Sendable {
    /// Runs one statement in the transaction.
    func query(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow]
}

extension SQLTransaction {
    func query(_ statement: SQLStatement) async throws -> [SQLRow] {
        try await query(statement.sql, statement.binds)
    }
}
