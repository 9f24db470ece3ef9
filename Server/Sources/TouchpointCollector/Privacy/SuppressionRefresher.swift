import Logging
import ServiceLifecycle

/// Reloads the suppressed ids every `interval`, so a deletion handled by another collector on the
/// same PostgreSQL is refused here too within that time.
struct SuppressionRefresher: Service {
    let deletions: DeletionService
    let interval: Duration
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled else { return }
                do {
                    try await deletions.load()
                } catch {
                    logger.warning("cannot reload the suppressed ids", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
