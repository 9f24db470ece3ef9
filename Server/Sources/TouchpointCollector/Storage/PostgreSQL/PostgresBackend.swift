import Foundation
import Logging
import NIOCore
import PostgresNIO

/// PostgreSQL through postgres-nio's connection pool: the backend for several collectors sharing
/// one database.
final class PostgresBackend: SQLBackend {
    let dialect = SQLDialect.postgres
    private let client: PostgresClient
    private let runTask: Task<Void, Never>
    private let logger: Logger

    /// A key for `pg_advisory_xact_lock`, so that collectors starting together migrate one at a time.
    private static let schemaLockKey: Int64 = 0x546F_7563_6870_7400  // "Touchpt\0"

    private init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
        runTask = Task { await client.run() }
    }

    /// Connects to the database at `url` and checks that it answers.
    /// - Throws: ``StorageError`` with code `invalidDatabaseURL` or `unavailable`.
    static func open(url: String, maximumConnections: Int, logger: Logger) async throws -> PostgresBackend {
        var configuration = try PostgresURL(url).clientConfiguration()
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectTimeout = .seconds(5)
        // No JIT compilation: PostgreSQL compiles a query whose estimated cost passes
        // `jit_above_cost`, and for the analytics queries (a second or less) that took longer than
        // it saved: 0.2-0.7 s of a breakdown trend over ten million events.
        configuration.options.additionalStartupParameters = [("jit", "off")]
        let backend = PostgresBackend(client: PostgresClient(configuration: configuration), logger: logger)
        do {
            _ = try await backend.query("SELECT 1", [])
        } catch {
            try? await backend.close()
            throw StorageError(
                code: .unavailable,
                message: "cannot reach PostgreSQL at \(PostgresURL.redacted(url)): \(String(reflecting: error))")
        }
        return backend
    }

    func query(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
        let rows = try await client.query(try Self.query(sql, binds), logger: logger)
        return try await Self.collect(rows)
    }

    /// PostgreSQL says which columns are `bytea`: every one is read as bytes.
    func query(_ sql: String, _ binds: [SQLValue], bytesAt bytes: Set<Int>) async throws -> [SQLRow] {
        try await query(sql, binds)
    }

    func writeStatement(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
        try await retryingConflicts { try await self.query(sql, binds) }
    }

    /// Runs a write statement prepared once per connection (PostgreSQL parses and plans it once),
    /// on its own, in turn with other writes; run again on a deadlock like ``writeStatement(_:_:)``.
    func writePrepared<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws -> [Statement.Row]
    where Statement.Row: Sendable {
        try await retryingConflicts {
            var rows: [Statement.Row] = []
            for try await row in try await client.execute(statement, logger: logger) { rows.append(row) }
            return rows
        }
    }

    func write<Result: Sendable>(
        _ body: @Sendable (any SQLTransaction) async throws -> Result
    ) async throws -> Result {
        try await retryingConflicts {
            try await client.withTransaction(logger: logger) { connection in
                try await body(Transaction(connection: connection, logger: logger))
            }
        }
    }

    /// Runs `operation` again (up to 3 times) when PostgreSQL aborted it for a deadlock or a
    /// serialization failure; it was rolled back, so running it again is safe.
    private func retryingConflicts<Result: Sendable>(_ operation: () async throws -> Result) async throws -> Result {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await operation()
            } catch let error as PSQLError where attempt < 4 && Self.isRetryable(error) {
                try await Task.sleep(for: .milliseconds(5 * attempt))
            }
        }
    }

    func withSchemaLock<Result: Sendable>(
        _ body: @Sendable (any SQLTransaction) async throws -> Result
    ) async throws -> Result {
        try await write { transaction in
            _ = try await transaction.query("SELECT pg_advisory_xact_lock(\(Self.schemaLockKey))", [])
            return try await body(transaction)
        }
    }

    /// Nothing: PostgreSQL's write-ahead log is the server's.
    func purgeLog() async throws {}

    func close() async throws {
        runTask.cancel()
        await runTask.value
    }

    private static func isRetryable(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState] else { return false }
        return state == "40P01" || state == "40001"  // deadlock_detected, serialization_failure
    }

    private struct Transaction: SQLTransaction {
        let connection: PostgresConnection
        let logger: Logger

        func query(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
            let rows = try await connection.query(try PostgresBackend.query(sql, binds), logger: logger)
            return try await PostgresBackend.collect(rows)
        }

        func query(_ sql: String, _ binds: [SQLValue], bytesAt bytes: Set<Int>) async throws -> [SQLRow] {
            try await query(sql, binds)
        }
    }

    private static func query(_ sql: String, _ binds: [SQLValue]) throws -> PostgresQuery {
        PostgresQuery(unsafeSQL: sql, binds: bindings(binds))
    }

    /// `binds` as postgres-nio's bindings.
    static func bindings(_ binds: [SQLValue]) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: binds.count)
        for value in binds {
            switch value {
            case .null: bindings.appendNull()
            case .int(let number): bindings.append(number)
            case .double(let number): bindings.append(number)
            case .text(let text), .id(let text): bindings.append(text)
            case .textArray(let texts): bindings.append(texts)
            case .intArray(let numbers): bindings.append(numbers)
            case .bytes(let bytes): bindings.append(ByteBuffer(bytes: bytes))
            }
        }
        return bindings
    }

    private static func collect(_ rows: PostgresRowSequence) async throws -> [SQLRow] {
        var result: [SQLRow] = []
        for try await row in rows {
            var values: SQLRow = []
            values.reserveCapacity(row.count)
            for cell in row {
                values.append(try value(cell))
            }
            result.append(values)
        }
        return result
    }

    private static func value(_ cell: PostgresCell) throws -> SQLValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .int2, .int4, .int8: return .int(try cell.decode(Int64.self))
        case .float4, .float8: return .double(try cell.decode(Double.self))
        case .bool: return .int(try cell.decode(Bool.self) ? 1 : 0)
        case .bytea: return .bytes(Array(try cell.decode(ByteBuffer.self).readableBytesView))
        default: return .text(try cell.decode(String.self))
        }
    }
}
