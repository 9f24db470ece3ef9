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

    func putScenario(_ key: ScenarioKey, body: String, condition: ScenarioWriteCondition, at time: Int64)
        async throws -> ScenarioWriteResult
    {
        var write: SQLStatement
        switch condition {
        case .create:
            write = SQLStatement(
                dialect, "INSERT INTO scenarios (source, namespace, scenario_id, body, version, updated_at) VALUES ")
            write.bindTuple([
                .text(key.source), .text(key.namespace), .text(key.scenarioId), .text(body), .int(1), .int(time),
            ])
            write.append(" ON CONFLICT (source, namespace, scenario_id) DO NOTHING RETURNING version")
        case .version, .exists:
            write = SQLStatement(dialect, "UPDATE scenarios SET body = ")
            write.bind(.text(body))
            write.append(", version = version + 1, updated_at = ")
            write.bind(.int(time))
            write.append(" WHERE ")
            appendKey(key, to: &write)
            if case .version(let version) = condition {
                write.append(" AND version = ")
                write.bind(.int(version))
            }
            write.append(" RETURNING version")
        }
        var current = SQLStatement(dialect, "SELECT version FROM scenarios WHERE ")
        appendKey(key, to: &current)
        let statements = (write: write, current: current)
        return try await backend.write { transaction in
            if let version = try await transaction.query(statements.write).first?.first?.int {
                return .written(version: version)
            }
            let stored = try await transaction.query(statements.current).first?.first?.int
            return .preconditionFailed(current: stored)
        }
    }

    private func appendKey(_ key: ScenarioKey, to statement: inout SQLStatement) {
        statement.append("source = ")
        statement.bind(.text(key.source))
        statement.append(" AND namespace = ")
        statement.bind(.text(key.namespace))
        statement.append(" AND scenario_id = ")
        statement.bind(.text(key.scenarioId))
    }
}
