/// A database's connections (SQLite's writer and read pool, PostgreSQL's pool), which run SQL:
/// statements on their own, write transactions, and the migrations under a lock.
///
/// One of three places where the two databases differ: each also brings its own ``EventWriter``
/// (how ingest stores events), and ``SQLDialect`` words the SQL they do not share.
/// ``SQLCollectorStorage`` holds the storage logic on top of the three.
protocol SQLBackend: Sendable {
    /// Which SQL the backend speaks.
    var dialect: SQLDialect { get }

    /// Runs one read statement outside any transaction.
    func query(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow]

    /// Runs one read statement outside any transaction, reading the columns at `bytes` (from 0)
    /// as ``SQLValue/bytes(_:)``.
    func query(_ sql: String, _ binds: [SQLValue], bytesAt bytes: Set<Int>) async throws -> [SQLRow]

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

    /// Empties what the database keeps of past writes beside its tables, once a deletion has
    /// overwritten them: SQLite's write-ahead log, truncated; nothing for PostgreSQL, whose log is
    /// the server's.
    func purgeLog() async throws

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

    /// Runs one statement in the transaction, reading the columns at `bytes` (from 0) as
    /// ``SQLValue/bytes(_:)``.
    func query(_ sql: String, _ binds: [SQLValue], bytesAt bytes: Set<Int>) async throws -> [SQLRow]
}

extension SQLTransaction {
    func query(_ statement: SQLStatement) async throws -> [SQLRow] {
        try await query(statement.sql, statement.binds)
    }
}
