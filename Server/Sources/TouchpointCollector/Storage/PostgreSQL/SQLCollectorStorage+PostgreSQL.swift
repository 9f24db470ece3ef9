import Logging

extension SQLCollectorStorage {
    /// Connects to PostgreSQL at `url` and brings its schema up to date; with `clickHouse`, also
    /// keeps the events there for the insights (its table created when missing).
    static func postgres(
        url: String, maximumConnections: Int = 8, clickHouse: ClickHouseEvents? = nil, logger: Logger
    ) async throws -> SQLCollectorStorage {
        let backend: PostgresBackend
        do {
            backend = try await PostgresBackend.open(url: url, maximumConnections: maximumConnections, logger: logger)
        } catch {
            await clickHouse?.client.close()
            throw error
        }
        return try await migrated(backend, clickHouse: clickHouse, logger: logger, insights: PostgresInsights.init) {
            PostgresEventWriter(backend: $0, calendars: $1)
        }
    }
}
