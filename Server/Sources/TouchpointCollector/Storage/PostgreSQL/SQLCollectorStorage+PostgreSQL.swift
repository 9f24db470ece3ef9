import Logging

extension SQLCollectorStorage {
    /// Connects to PostgreSQL at `url` and brings its schema up to date.
    static func postgres(url: String, maximumConnections: Int = 8, logger: Logger) async throws
        -> SQLCollectorStorage
    {
        let backend = try await PostgresBackend.open(url: url, maximumConnections: maximumConnections, logger: logger)
        return try await migrated(backend, logger: logger) { PostgresEventWriter(backend: $0, calendars: $1) }
    }
}
