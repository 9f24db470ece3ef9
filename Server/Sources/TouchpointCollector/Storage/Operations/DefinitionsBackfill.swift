import Logging
import ServiceLifecycle
import TouchpointCore

/// Counts the events stored before schema 21 into the definitions (``DefinitionCounts``), from the
/// oldest, a batch per transaction, in the background: an upgrade does not read every stored event
/// before the collector answers.
///
/// `definitions_backfill` holds how far it got (`done`, a seq) and where it ends (`last`: the
/// newest event when the upgrade ran; every later event was counted as it was stored). An event
/// is counted when its seq is past `last` or at most `done`; deletion and retention take off only
/// counted events (``SQLCollectorStorage/forgetDefinitions(of:at:in:dialect:)``), reading the row as
/// a batch does, so that the two take turns: PostgreSQL's collectors lock it for the transaction,
/// SQLite's one writer runs one at a time. A batch that fails or a collector that stops leaves
/// `done` where its last committed batch put it, and the next run goes on from there.
enum DefinitionsBackfill {
    /// How far the backfill got.
    typealias Progress = BackfillProgress

    /// The progress, read in `transaction` and locked until it ends (PostgreSQL).
    static func progress(in transaction: any SQLTransaction, dialect: SQLDialect) async throws -> Progress {
        try await Progress.locked("definitions_backfill", in: transaction, dialect: dialect)
    }

    /// Counts the next `limit` events stored before the upgrade, in one transaction.
    /// - Returns: the progress after it.
    @discardableResult
    static func runBatch(_ backend: any SQLBackend, limit: Int) async throws -> Progress {
        let dialect = backend.dialect
        return try await backend.write { transaction in
            var progress = try await progress(in: transaction, dialect: dialect)
            guard !progress.isComplete else { return progress }
            var select = SQLStatement(
                dialect, "SELECT seq, source, type, event, lifted, payload, received_at FROM events WHERE seq > ")
            select.bind(.int(progress.done))
            select.append(" AND seq <= ")
            select.bind(.int(progress.last))
            select.append(" ORDER BY seq LIMIT ")
            select.bind(.int(Int64(limit)))
            let rows = try await transaction.query(select)
            var counts = DefinitionCounts()
            for row in rows {
                guard let event = StoredDefinedEvent(row, at: 1), let shape = event.shape else { continue }
                counts.add(shape, lastSeen: row[6].int ?? 0)
            }
            for statement in DefinitionCounts.statements(dialect, counts.changes) {
                _ = try await transaction.query(statement)
            }
            progress.done = rows.count < limit ? progress.last : rows.last?[0].int ?? progress.last
            var update = SQLStatement(dialect, "UPDATE definitions_backfill SET done = ")
            update.bind(.int(progress.done))
            _ = try await transaction.query(update)
            return progress
        }
    }
}

/// Runs the counts' backfills until each is complete, a batch at a time, yielding between batches:
/// the definitions (``DefinitionsBackfill``), then the events per minute (``EventMinutes``).
struct CountsBackfillRunner: Service {
    let storage: any StorageOperations
    let logger: Logger
    /// Events a batch of the definitions counts.
    var batchSize = 2_000
    /// Seqs a batch of the events per minute covers (a grouped read, no payload parsed).
    var minutesBatchSize = 20_000

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await backfill("the definitions", batch: batchSize) {
                try await storage.backfillDefinitions(limit: $0)
            }
            await backfill("the events per minute", batch: minutesBatchSize) {
                try await storage.backfillEventMinutes(limit: $0)
            }
        }
        // Done: the group keeps running until the collector shuts down.
        try? await gracefulShutdown()
    }

    /// Runs one backfill's batches until it is complete or the task is cancelled.
    private func backfill(
        _ name: String, batch: Int, _ run: @Sendable (Int) async throws -> BackfillProgress
    ) async {
        var announced = false
        while !Task.isCancelled {
            do {
                let progress = try await run(batch)
                if progress.isComplete {
                    if announced { logger.info("\(name) count every stored event") }
                    return
                }
                if !announced {
                    logger.info(
                        "counting the events stored before the upgrade into \(name)",
                        metadata: ["through": "\(progress.last)"])
                    announced = true
                }
                await Task.yield()
            } catch {
                logger.warning(
                    "the backfill of \(name) failed; retrying in a minute", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: .seconds(60))
            }
        }
    }
}
