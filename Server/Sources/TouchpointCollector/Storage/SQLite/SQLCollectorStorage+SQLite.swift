import Logging

extension SQLCollectorStorage {
    /// Opens the SQLite database file at `path` (creating it), brings its schema up to date and
    /// loads its event writer (``SQLiteEventWriter``).
    /// - Parameter tuning: production's unless a test changes it.
    static func sqlite(path: String, logger: Logger, tuning: SQLiteTuning = .production) async throws
        -> SQLCollectorStorage
    {
        let backend = try await SQLiteBackend.open(path: path, logger: logger, flush: tuning.flush)
        return try await migrated(backend, logger: logger, insights: SQLiteInsights.init) { backend, calendars in
            try await SQLiteEventWriter.open(backend, path: path, calendars: calendars, tuning: tuning, logger: logger)
        }
    }
}
