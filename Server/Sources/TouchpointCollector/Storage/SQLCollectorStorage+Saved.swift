import Foundation
import TouchpointCore

/// Saved cohorts, insights and dashboards (schema 22): small tables read by source and by number.
/// ``SavedLibrary`` checks what is written; these only store it.
extension SQLCollectorStorage {
    // MARK: Cohorts

    func cohorts(source: String, id: Int64?) async throws -> [Cohort] {
        var statement = SQLStatement(
            dialect, "SELECT id, name, definition, created_at, updated_at FROM cohorts WHERE source = ")
        statement.bind(.text(source))
        Self.appendID(id, to: &statement)
        return try await backend.query(statement).map { row in
            guard let id = row[0].int, let name = row[1].text, let definition = row[2].text,
                let created = row[3].int, let updated = row[4].int,
                case .object(let members)? = try? JSONParser.parse(definition),
                let conditions = try? CohortCondition.parseList(members["conditions"])
            else { throw StorageError(code: .corruptRow, message: "a cohorts row does not have the expected columns") }
            return Cohort(id: id, name: name, conditions: conditions, createdAt: created, updatedAt: updated)
        }
    }

    func saveCohort(source: String, _ cohort: Cohort) async throws -> Cohort? {
        let id = try await save(
            table: "cohorts", source: source, id: cohort.id, at: cohort.updatedAt,
            columns: [("name", .text(cohort.name)), ("definition", .text(cohort.definition))])
        guard let id else { return nil }
        return try await cohorts(source: source, id: id).first
    }

    func deleteCohort(source: String, id: Int64) async throws -> Bool {
        try await delete(table: "cohorts", source: source, id: id, before: [])
    }

    // MARK: Insights

    func insights(source: String, id: Int64?) async throws -> [SavedInsight] {
        var statement = SQLStatement(
            dialect, "SELECT id, name, kind, parameters, created_at, updated_at FROM insights WHERE source = ")
        statement.bind(.text(source))
        Self.appendID(id, to: &statement)
        return try await backend.query(statement).map { row in
            guard let id = row[0].int, let name = row[1].text,
                let kind = row[2].text.flatMap({ InsightKind(rawValue: $0) }),
                let parameters = row[3].text, let created = row[4].int, let updated = row[5].int
            else {
                throw StorageError(code: .corruptRow, message: "an insights row does not have the expected columns")
            }
            return SavedInsight(
                id: id, name: name, kind: kind, parameters: SavedInsight.parameters(ofQuery: parameters),
                createdAt: created,
                updatedAt: updated)
        }
    }

    func saveInsight(source: String, _ insight: SavedInsight) async throws -> SavedInsight? {
        let id = try await save(
            table: "insights", source: source, id: insight.id, at: insight.updatedAt,
            columns: [
                ("name", .text(insight.name)), ("kind", .text(insight.kind.rawValue)),
                ("parameters", .text(insight.queryString)),
            ])
        guard let id else { return nil }
        return try await insights(source: source, id: id).first
    }

    /// Deletes the insight and takes it off every dashboard, in one transaction.
    func deleteInsight(source: String, id: Int64) async throws -> Bool {
        try await delete(
            table: "insights", source: source, id: id, before: [tiles(of: "insights", id: id, source: source)])
    }

    // MARK: Dashboards

    func dashboards(source: String, id: Int64?) async throws -> [SavedDashboard] {
        var statement = SQLStatement(dialect, "SELECT id, name, created_at, updated_at FROM dashboards WHERE source = ")
        statement.bind(.text(source))
        Self.appendID(id, to: &statement)
        var dashboards = try await backend.query(statement).map { row in
            guard let id = row[0].int, let name = row[1].text, let created = row[2].int, let updated = row[3].int else {
                throw StorageError(code: .corruptRow, message: "a dashboards row does not have the expected columns")
            }
            return SavedDashboard(id: id, name: name, insights: [], createdAt: created, updatedAt: updated)
        }
        guard !dashboards.isEmpty else { return [] }
        var tiles = SQLStatement(
            dialect, "SELECT dashboard_id, insight_id FROM dashboard_insights WHERE dashboard_id IN ")
        tiles.bindTuple(dashboards.map { .int($0.id) })
        tiles.append(" ORDER BY dashboard_id, position")
        var byDashboard: [Int64: [Int64]] = [:]
        for row in try await backend.query(tiles) {
            if let dashboard = row[0].int, let insight = row[1].int {
                byDashboard[dashboard, default: []].append(insight)
            }
        }
        for index in dashboards.indices { dashboards[index].insights = byDashboard[dashboards[index].id] ?? [] }
        return dashboards
    }

    /// Saves the dashboard's name and puts its insights on it in order, in one transaction.
    func saveDashboard(source: String, _ dashboard: SavedDashboard) async throws -> SavedDashboard? {
        let dialect = self.dialect
        let tiles = dashboard.insights
        let id = try await save(
            table: "dashboards", source: source, id: dashboard.id, at: dashboard.updatedAt,
            columns: [("name", .text(dashboard.name))]
        ) { transaction, id in
            var clear = SQLStatement(dialect, "DELETE FROM dashboard_insights WHERE dashboard_id = ")
            clear.bind(.int(id))
            _ = try await transaction.query(clear)
            guard !tiles.isEmpty else { return }
            var insert = SQLStatement(
                dialect, "INSERT INTO dashboard_insights (dashboard_id, insight_id, position) VALUES ")
            for (position, insight) in tiles.enumerated() {
                if position > 0 { insert.append(", ") }
                insert.bindTuple([.int(id), .int(insight), .int(Int64(position))])
            }
            _ = try await transaction.query(insert)
        }
        guard let id else { return nil }
        return try await dashboards(source: source, id: id).first
    }

    func deleteDashboard(source: String, id: Int64) async throws -> Bool {
        try await delete(
            table: "dashboards", source: source, id: id, before: [tiles(of: "dashboards", id: id, source: source)])
    }

    // MARK: Shared

    /// Deletes the tiles of insight or dashboard `id` (`table` names which) of `source`.
    private func tiles(of table: String, id: Int64, source: String) -> SQLStatement {
        let column = table == "insights" ? "insight_id" : "dashboard_id"
        var tiles = SQLStatement(dialect, "DELETE FROM dashboard_insights WHERE \(column) = ")
        tiles.bind(.int(id))
        tiles.append(" AND \(column) IN (SELECT id FROM \(table) WHERE source = ")
        tiles.bind(.text(source))
        tiles.append(")")
        return tiles
    }

    private static func appendID(_ id: Int64?, to statement: inout SQLStatement) {
        if let id {
            statement.append(" AND id = ")
            statement.bind(.int(id))
        } else {
            statement.append(" ORDER BY name, id")
        }
    }

    /// Inserts a row (`id` 0) or updates the source's row `id`, then runs `also` in the same
    /// transaction with the row's id.
    /// - Returns: the row's id; nil when there is no row `id` of `source` to update.
    private func save(
        table: String, source: String, id: Int64, at time: Int64, columns: [(name: String, value: SQLValue)],
        also: @escaping @Sendable (any SQLTransaction, Int64) async throws -> Void = { _, _ in }
    ) async throws -> Int64? {
        var statement: SQLStatement
        if id == 0 {
            let names = ["source"] + columns.map(\.name) + ["created_at", "updated_at"]
            statement = SQLStatement(dialect, "INSERT INTO \(table) (\(names.joined(separator: ", "))) VALUES ")
            statement.bindTuple([.text(source)] + columns.map(\.value) + [.int(time), .int(time)])
        } else {
            statement = SQLStatement(dialect, "UPDATE \(table) SET ")
            for (name, value) in columns {
                statement.append("\(name) = ")
                statement.bind(value)
                statement.append(", ")
            }
            statement.append("updated_at = ")
            statement.bind(.int(time))
            statement.append(" WHERE id = ")
            statement.bind(.int(id))
            statement.append(" AND source = ")
            statement.bind(.text(source))
        }
        statement.append(" RETURNING id")
        let write = statement
        return try await backend.write { transaction in
            guard let saved = try await transaction.query(write).first?.first?.int else { return nil }
            try await also(transaction, saved)
            return saved
        }
    }

    /// Runs `before`, then deletes the source's row `id`, in one transaction.
    /// - Returns: whether there was such a row (nothing is changed when there was not).
    private func delete(table: String, source: String, id: Int64, before: [SQLStatement]) async throws -> Bool {
        var statement = SQLStatement(dialect, "DELETE FROM \(table) WHERE id = ")
        statement.bind(.int(id))
        statement.append(" AND source = ")
        statement.bind(.text(source))
        statement.append(" RETURNING id")
        let write = statement
        return try await backend.write { transaction in
            for statement in before { _ = try await transaction.query(statement) }
            return try await !transaction.query(write).isEmpty
        }
    }
}
