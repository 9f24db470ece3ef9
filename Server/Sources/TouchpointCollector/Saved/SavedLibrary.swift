import Foundation
import TouchpointCore

/// Saved cohorts, insights and dashboards, per source: what the API (`/v1/cohorts`,
/// `/v1/insights`, `/v1/dashboards`) and the dashboard's forms write, checked here once for both.
///
/// An insight is saved only with parameters its query accepts, and a cohort it names must exist;
/// a dashboard holds only insights of its source; a cohort that saved insights use cannot be
/// deleted; deleting an insight takes it off every dashboard.
public final class SavedLibrary: Sendable {
    let storage: any SavedStore
    let clock: any WallClock

    init(storage: any SavedStore, clock: any WallClock) {
        self.storage = storage
        self.clock = clock
    }

    /// The most insights one dashboard holds.
    static let maximumTiles = 50

    private var now: Int64 { Timestamp.milliseconds(clock.now()) }

    // MARK: Cohorts

    /// The source's cohorts, by name.
    public func cohorts(source: String) async throws -> [Cohort] { try await storage.cohorts(source: source, id: nil) }

    /// One cohort.
    /// - Throws: ``CollectorError`` `not_found`.
    public func cohort(source: String, id: Int64) async throws -> Cohort {
        guard let cohort = try await storage.cohorts(source: source, id: id).first else { throw missing("cohort", id) }
        return cohort
    }

    /// Saves a new cohort.
    public func createCohort(source: String, name: String, conditions: [CohortCondition]) async throws -> Cohort {
        let cohort = Cohort(
            id: 0, name: try Self.checkedName(name), conditions: conditions, createdAt: now, updatedAt: now)
        return try await saved(storage.saveCohort(source: source, cohort), "cohort", 0)
    }

    /// Renames a cohort or replaces its conditions (nil keeps them).
    public func updateCohort(source: String, id: Int64, name: String?, conditions: [CohortCondition]?) async throws
        -> Cohort
    {
        var cohort = try await self.cohort(source: source, id: id)
        if let name { cohort.name = try Self.checkedName(name) }
        if let conditions { cohort.conditions = conditions }
        cohort.updatedAt = now
        return try await saved(storage.saveCohort(source: source, cohort), "cohort", id)
    }

    /// Deletes a cohort that no saved insight uses.
    /// - Throws: ``CollectorError`` `not_found`, or `conflict` naming the insights that use it.
    public func deleteCohort(source: String, id: Int64) async throws {
        let users = try await storage.insights(source: source, id: nil).filter { $0.parameters["cohort"] == String(id) }
        guard users.isEmpty else {
            throw CollectorError(
                .conflict,
                "cohort \(id) is used by the saved insights \(users.map { "\"\($0.name)\"" }.joined(separator: ", ")): change or delete them first"
            )
        }
        guard try await storage.deleteCohort(source: source, id: id) else { throw missing("cohort", id) }
    }

    // MARK: Insights

    /// The source's saved insights, by name.
    public func insights(source: String) async throws -> [SavedInsight] {
        try await storage.insights(source: source, id: nil)
    }

    /// One saved insight.
    /// - Throws: ``CollectorError`` `not_found`.
    public func insight(source: String, id: Int64) async throws -> SavedInsight {
        guard let insight = try await storage.insights(source: source, id: id).first else {
            throw missing("insight", id)
        }
        return insight
    }

    /// Saves an insight with a name, once its query accepts the parameters.
    /// - Throws: ``CollectorError`` `invalid_request` naming the field (`parameters.steps`).
    public func createInsight(source: String, name: String, kind: InsightKind, parameters: [String: String])
        async throws -> SavedInsight
    {
        let insight = SavedInsight(
            id: 0, name: try Self.checkedName(name), kind: kind,
            parameters: try await checked(parameters, kind: kind, source: source), createdAt: now, updatedAt: now)
        return try await saved(storage.saveInsight(source: source, insight), "insight", 0)
    }

    /// Renames a saved insight or replaces its parameters (nil keeps them).
    public func updateInsight(source: String, id: Int64, name: String?, parameters: [String: String]?) async throws
        -> SavedInsight
    {
        var insight = try await self.insight(source: source, id: id)
        if let name { insight.name = try Self.checkedName(name) }
        if let parameters { insight.parameters = try await checked(parameters, kind: insight.kind, source: source) }
        insight.updatedAt = now
        return try await saved(storage.saveInsight(source: source, insight), "insight", id)
    }

    /// Deletes a saved insight and takes it off every dashboard.
    public func deleteInsight(source: String, id: Int64) async throws {
        guard try await storage.deleteInsight(source: source, id: id) else { throw missing("insight", id) }
    }

    /// The parameters an insight keeps: those its query reads, checked by it.
    func checked(_ parameters: [String: String], kind: InsightKind, source: String) async throws -> [String: String] {
        let kept = parameters.filter { !InsightKind.ignoredParameters.contains($0.key) && !$0.value.isEmpty }
        guard kept.count <= 50 else {
            throw CollectorError(.invalidRequest, "parameters: at most 50", path: "parameters")
        }
        for (name, value) in kept where name.utf8.count > 64 || value.utf8.count > 2000 {
            throw CollectorError(
                .invalidRequest, "parameters.\(name): a name of at most 64 bytes and a value of at most 2,000",
                path: "parameters.\(name)")
        }
        let cohort: Int64?
        do {
            cohort = try kind.validate(AnalyticsParameters(now: clock.now()) { kept[$0] })
        } catch {
            let path = "parameters." + (error.path ?? "")
            throw CollectorError(.invalidRequest, "parameters.\(error.message)", path: path)
        }
        if let cohort, try await storage.cohorts(source: source, id: cohort).isEmpty {
            throw CollectorError(
                .invalidRequest, "parameters.cohort: no cohort \(cohort) in source \"\(source)\"",
                path: "parameters.cohort")
        }
        return kept
    }

    // MARK: Dashboards

    /// The source's dashboards, by name.
    public func dashboards(source: String) async throws -> [SavedDashboard] {
        try await storage.dashboards(source: source, id: nil)
    }

    /// One dashboard.
    /// - Throws: ``CollectorError`` `not_found`.
    public func dashboard(source: String, id: Int64) async throws -> SavedDashboard {
        guard let dashboard = try await storage.dashboards(source: source, id: id).first else {
            throw missing("dashboard", id)
        }
        return dashboard
    }

    /// Saves a new dashboard of saved insights, in order.
    public func createDashboard(source: String, name: String, insights: [Int64]) async throws -> SavedDashboard {
        let dashboard = SavedDashboard(
            id: 0, name: try Self.checkedName(name), insights: try await checked(insights, source: source),
            createdAt: now, updatedAt: now)
        return try await saved(storage.saveDashboard(source: source, dashboard), "dashboard", 0)
    }

    /// Renames a dashboard or replaces its insights, in their new order (nil keeps them).
    public func updateDashboard(source: String, id: Int64, name: String?, insights: [Int64]?) async throws
        -> SavedDashboard
    {
        var dashboard = try await self.dashboard(source: source, id: id)
        if let name { dashboard.name = try Self.checkedName(name) }
        if let insights { dashboard.insights = try await checked(insights, source: source) }
        dashboard.updatedAt = now
        return try await saved(storage.saveDashboard(source: source, dashboard), "dashboard", id)
    }

    /// Deletes a dashboard (its insights stay saved).
    public func deleteDashboard(source: String, id: Int64) async throws {
        guard try await storage.deleteDashboard(source: source, id: id) else { throw missing("dashboard", id) }
    }

    /// A dashboard's insights: each once, each a saved insight of the source, at most ``maximumTiles``.
    func checked(_ insights: [Int64], source: String) async throws -> [Int64] {
        guard insights.count <= Self.maximumTiles else {
            throw CollectorError(
                .invalidRequest, "insights: at most \(Self.maximumTiles) on one dashboard", path: "insights")
        }
        let known = Set(try await storage.insights(source: source, id: nil).map(\.id))
        var seen = Set<Int64>()
        for (index, id) in insights.enumerated() {
            guard known.contains(id) else {
                throw CollectorError(
                    .invalidRequest, "insights[\(index)]: no saved insight \(id) in source \"\(source)\"",
                    path: "insights[\(index)]")
            }
            guard seen.insert(id).inserted else {
                throw CollectorError(
                    .invalidRequest, "insights[\(index)]: insight \(id) is on the dashboard already",
                    path: "insights[\(index)]")
            }
        }
        return insights
    }

    // MARK: Shared

    /// A name: trimmed, 1 to 200 bytes, no control characters.
    static func checkedName(_ name: String) throws(CollectorError) -> String {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 200,
            !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw CollectorError(
                .invalidRequest, "name: expected 1 to 200 bytes of text without control characters", path: "name")
        }
        return trimmed
    }

    private func missing(_ what: String, _ id: Int64) -> CollectorError {
        CollectorError(.notFound, "no \(what) \(id) in this source")
    }

    private func saved<Item>(_ item: Item?, _ what: String, _ id: Int64) throws -> Item {
        guard let item else { throw missing(what, id) }
        return item
    }
}
