extension SQLCollectorStorage {
    // MARK: Remote config

    func config(source: String, kind: String) async throws -> StoredConfig? {
        var statement = SQLStatement(dialect, "SELECT body, etag, updated_at FROM configs WHERE source = ")
        statement.bind(.text(source))
        statement.append(" AND kind = ")
        statement.bind(.text(kind))
        guard let row = try await backend.query(statement).first else { return nil }
        guard let body = row[0].text, let etag = row[1].text, let updatedAt = row[2].int else {
            throw StorageError(code: .corruptRow, message: "a configs row does not have the expected columns")
        }
        return StoredConfig(source: source, kind: kind, body: body, etag: etag, updatedAt: updatedAt)
    }

    func putConfig(_ config: StoredConfig) async throws {
        var statement = SQLStatement(dialect, "INSERT INTO configs (source, kind, body, etag, updated_at) VALUES ")
        statement.bindTuple([
            .text(config.source), .text(config.kind), .text(config.body), .text(config.etag), .int(config.updatedAt),
        ])
        statement.append(
            " ON CONFLICT (source, kind) DO UPDATE SET body = excluded.body, etag = excluded.etag, updated_at = excluded.updated_at"
        )
        let write = statement
        _ = try await backend.write { try await $0.query(write) }
    }

    // MARK: Scenario state

    func scenario(_ key: ScenarioKey) async throws -> StoredScenario? {
        var statement = SQLStatement(dialect, "SELECT body, version FROM scenarios WHERE ")
        appendKey(key, to: &statement)
        guard let row = try await backend.query(statement).first else { return nil }
        guard let body = row[0].text, let version = row[1].int else {
            throw StorageError(code: .corruptRow, message: "a scenarios row does not have the expected columns")
        }
        return StoredScenario(body: body, version: version)
    }

    func putScenario(
        _ key: ScenarioKey, body: String, condition: ScenarioWriteCondition, quota: ScenarioQuota, at time: Int64
    ) async throws -> ScenarioWriteResult {
        let bytes = Int64(body.utf8.count)
        var stored = SQLStatement(dialect, "SELECT version, bytes FROM scenarios WHERE ")
        appendKey(key, to: &stored)
        var usage = SQLStatement(dialect, "SELECT documents, bytes FROM scenario_usage WHERE source = ")
        usage.bind(.text(key.source))
        // Writers of one source take turns from here, so two collectors on one PostgreSQL cannot
        // both pass the quota with the last free place.
        usage.append(dialect.lockingRead)
        let dialect = self.dialect
        let statements = (stored: stored, usage: usage)
        return try await backend.write { transaction in
            let row = try await transaction.query(statements.stored).first
            let current = row.flatMap { $0[0].int }
            let previousBytes = row.flatMap { $0[1].int } ?? 0
            switch condition {
            case .create where current != nil, .exists where current == nil:
                return .preconditionFailed(current: current)
            case .version(let version) where current != version:
                return .preconditionFailed(current: current)
            default:
                break
            }
            let totals = try await transaction.query(statements.usage).first
            let documents = totals.flatMap { $0[0].int } ?? 0
            let total = totals.flatMap { $0[1].int } ?? 0
            let addedDocuments: Int64 = current == nil ? 1 : 0
            if documents + addedDocuments > quota.maximumDocuments || total - previousBytes + bytes > quota.maximumBytes
            {
                return .quotaExceeded(documents: documents, bytes: total)
            }
            var write: SQLStatement
            if let current {
                write = SQLStatement(dialect, "UPDATE scenarios SET body = ")
                write.bind(.text(body))
                write.append(", bytes = ")
                write.bind(.int(bytes))
                write.append(", version = version + 1, updated_at = ")
                write.bind(.int(time))
                write.append(" WHERE ")
                Self.appendKey(key, to: &write)
                write.append(" AND version = ")
                write.bind(.int(current))
                write.append(" RETURNING version")
            } else {
                write = SQLStatement(
                    dialect,
                    "INSERT INTO scenarios (source, namespace, scenario_id, body, bytes, version, updated_at) VALUES ")
                write.bindTuple([
                    .text(key.source), .text(key.namespace), .text(key.scenarioId), .text(body), .int(bytes), .int(1),
                    .int(time),
                ])
                write.append(" ON CONFLICT (source, namespace, scenario_id) DO NOTHING RETURNING version")
            }
            // Another collector (PostgreSQL) may have written between the read and this write:
            // then nothing is written and the caller is told what is stored now.
            guard let version = try await transaction.query(write).first?.first?.int else {
                let now = try await transaction.query(statements.stored).first.flatMap { $0[0].int }
                return .preconditionFailed(current: now)
            }
            var account = SQLStatement(dialect, "INSERT INTO scenario_usage (source, documents, bytes) VALUES ")
            account.bindTuple([.text(key.source), .int(addedDocuments), .int(bytes - previousBytes)])
            account.append(
                " ON CONFLICT (source) DO UPDATE SET documents = scenario_usage.documents + excluded.documents,"
                    + " bytes = scenario_usage.bytes + excluded.bytes")
            _ = try await transaction.query(account)
            return .written(version: version)
        }
    }

    private func appendKey(_ key: ScenarioKey, to statement: inout SQLStatement) {
        Self.appendKey(key, to: &statement)
    }

    private static func appendKey(_ key: ScenarioKey, to statement: inout SQLStatement) {
        statement.append("source = ")
        statement.bind(.text(key.source))
        statement.append(" AND namespace = ")
        statement.bind(.text(key.namespace))
        statement.append(" AND scenario_id = ")
        statement.bind(.text(key.scenarioId))
    }
}
