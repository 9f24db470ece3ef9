import Foundation
import TouchpointCore

// MARK: Paths and cohorts

extension CollectorQuery {
    /// What people did after (or before) an event, as a tree of the most frequent ways.
    public func paths(source: String, _ query: PathQuery) async throws -> PathResult {
        var query = query
        query.people = try await people(source: source, cohort: query.cohort)
        // The names a path reads: the source's, without the excluded ones (by their bytes).
        let excluded = Set(query.exclude.map { ExactText($0) })
        let names = try await storage.eventNames(source: source).filter { !excluded.contains(ExactText($0)) }
        guard names.contains(where: { ExactText($0) == ExactText(query.event) }) else {
            return PathResult.build(query, paths: [])
        }
        return PathResult.build(
            query, paths: try await insights.paths(source: source, query: query, names: names))
    }

    /// The names of the events `source` holds, in order.
    public func eventNames(source: String) async throws -> [String] {
        try await storage.eventNames(source: source)
    }

    /// The people of cohort `cohort` as numbers (``PersonKeys``), which insights filter by; nil
    /// when `cohort` is nil (everyone).
    /// - Throws: ``CollectorError`` `invalid_parameter` naming `cohort` when the source has no such cohort.
    func people(source: String, cohort: Int64?) async throws -> Set<Int64>? {
        guard let cohort else { return nil }
        guard let found = try await storage.cohorts(source: source, id: cohort).first else {
            throw CollectorError(
                .invalidParameter, "cohort: no cohort \(cohort) in source \"\(source)\"", path: "cohort")
        }
        return try await members(source: source, of: found)
    }

    /// The people who meet every condition of `cohort` now.
    public func members(source: String, of cohort: Cohort) async throws -> Set<Int64> {
        let now = Timestamp.milliseconds(clock.now())
        var people: Set<Int64>?
        var traits: [Int64: [String: JSONValue]]?
        for condition in cohort.conditions {
            let found: Set<Int64>
            switch condition {
            case .performed(let event, let times, let days):
                found = try await storage.peoplePerforming(
                    source: source, event: event, times: times, from: now - Int64(days) * 86_400_000, to: now)
            case .trait(let filter):
                if traits == nil { traits = try await self.traits(source: source) }
                found = Set(traits?.compactMap { filter.matches($0.value[filter.property]) ? $0.key : nil } ?? [])
            }
            people = people.map { $0.intersection(found) } ?? found
            if people?.isEmpty == true { break }
        }
        return people ?? []
    }

    /// Each user's traits, their `identify` calls merged in arrival order, by person number.
    func traits(source: String) async throws -> [Int64: [String: JSONValue]] {
        var payloads: [Int64: [String]] = [:]
        for row in try await storage.identifyPayloads(source: source) {
            payloads[row.person, default: []].append(row.payload)
        }
        return payloads.mapValues(TraitMerge.merged)
    }

    /// A page of a cohort's members, by id, with its size.
    public func members(source: String, of cohort: Cohort, page: PageRequest) async throws
        -> (size: Int, page: Page<CohortMember>)
    {
        let people = try await members(source: source, of: cohort)
        var after: String?
        if let cursor = page.cursor {
            guard let id = OpaqueID.decode(cursor) else {
                throw StorageError(code: .invalidCursor, message: "\"\(cursor)\" was not handed out by this list")
            }
            after = id
        }
        let found = try await storage.people(source: source, numbers: people, after: after, limit: page.limit + 1)
        let kept = Array(found.prefix(page.limit))
        return (
            people.count,
            Page(items: kept, nextCursor: found.count > page.limit ? kept.last.map { OpaqueID.encode($0.id) } : nil)
        )
    }
}
