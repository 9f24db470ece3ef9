@testable import TouchpointCollector

extension SQLCollectorStorage {
    /// SQLite's event writer, whose parts the tests of the write path look into (nil for
    /// PostgreSQL's storage).
    var sqliteWriter: SQLiteEventWriter? { writer as? SQLiteEventWriter }
}
