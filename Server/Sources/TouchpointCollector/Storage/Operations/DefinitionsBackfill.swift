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
    struct Progress: Sendable, Hashable {
        var done: Int64
        var last: Int64

        /// Whether every event stored before the upgrade is counted.
        var isComplete: Bool { done >= last }

        /// Whether the event with `seq` is counted in the definitions.
        func counts(_ seq: Int64) -> Bool { seq > last || seq <= done }
    }

    /// The progress, read in `transaction` and locked until it ends (PostgreSQL).
    static func progress(in transaction: any SQLTransaction, dialect: SQLDialect) async throws -> Progress {
        guard
            let row = try await transaction.query(
                "SELECT done, last FROM definitions_backfill" + dialect.lockingRead, []
            ).first, let done = row[0].int, let last = row[1].int
        else { throw StorageError(code: .corruptRow, message: "definitions_backfill has no row") }
        return Progress(done: done, last: last)
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

/// Runs ``DefinitionsBackfill`` until it is complete, a batch at a time, yielding between batches.
struct DefinitionsBackfillRunner: Service {
    let storage: any CollectorStorage
    let logger: Logger
    /// Events a batch counts.
    var batchSize = 2_000

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var announced = false
            while !Task.isCancelled {
                do {
                    let progress = try await storage.backfillDefinitions(limit: batchSize)
                    if progress.isComplete {
                        if announced { logger.info("the definitions count every stored event") }
                        break
                    }
                    if !announced {
                        logger.info(
                            "counting the events stored before the upgrade into the definitions",
                            metadata: ["through": "\(progress.last)"])
                        announced = true
                    }
                    await Task.yield()
                } catch {
                    logger.warning(
                        "the definitions' backfill failed; retrying in a minute", metadata: ["error": "\(error)"])
                    try? await Task.sleep(for: .seconds(60))
                }
            }
        }
        // Done: the group keeps running until the collector shuts down.
        try? await gracefulShutdown()
    }
}
