import Foundation
import TouchpointCore

@testable import TouchpointCollector

/// A fourth insight engine, in a folder of its own: it answers every ``InsightEngine`` requirement
/// by walking a list of events in memory. It exists to show that an engine is one conformer — the
/// routes, the typed queries and what is computed from the rows (``FunnelResult``, ``PathResult``,
/// trends' series) need nothing else — and it records what it was asked.
///
/// Events carry no merges: each has the person it counts for. The maths with a property are not
/// answered (their aggregate is nil), which the tests that use it do not ask for.
final class MemoryInsights: InsightEngine, @unchecked Sendable {
    struct Event: Sendable {
        var name: String
        var person: Int64
        var timestamp: Int64
        var properties: [String: JSONValue] = [:]
    }

    let events: [Event]
    private let lock = NSLock()
    private var askedNames: [String] = []

    init(_ events: [Event]) { self.events = events }

    var engineName: String { "memory" }

    /// Every requirement asked, in order.
    var asked: [String] { lock.withLock { askedNames } }

    private func ask(_ name: String) { lock.withLock { askedNames.append(name) } }

    /// The trend's events: its name (by bytes), range and filters on properties.
    private func selected(_ query: TrendQuery) -> [Event] {
        events.filter { event in
            ExactText(event.name) == ExactText(query.event) && event.timestamp >= query.range.from
                && event.timestamp < query.range.to
                && query.filters.allSatisfy { $0.scope == .event && $0.matches(event.properties[$0.property]) }
        }
    }

    private func value(_ event: Event, _ property: String) -> String? {
        event.properties[property].flatMap(PropertyFilter.text)
    }

    private func counted(_ events: [Event]) -> TrendCount {
        TrendCount(count: events.count, users: Set(events.map(\.person)).count, aggregate: nil)
    }

    private func byInterval(_ query: TrendQuery, _ events: [Event]) -> [Int64: [Event]] {
        Dictionary(grouping: events) { query.range.calendar.index(of: $0.timestamp, query.interval) }
    }

    func trendTopValues(source: String, query: TrendQuery, property: String, limit: Int) async throws -> [String] {
        ask("trendTopValues")
        let counts = Dictionary(grouping: selected(query).compactMap { value($0, property) }.map { ExactText($0) }) {
            $0
        }
        .mapValues(\.count)
        return counts.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.prefix(limit).map(\.key.text)
    }

    func trendTotals(source: String, query: TrendQuery) async throws -> TrendTotals {
        ask("trendTotals")
        return byInterval(query, selected(query)).mapValues(counted)
    }

    func trendAggregate(source: String, query: TrendQuery) async throws -> TrendCount {
        ask("trendAggregate")
        return counted(selected(query))
    }

    func trendCounts(source: String, query: TrendQuery) async throws -> TrendTotals {
        ask("trendCounts")
        return byInterval(query, selected(query)).mapValues { TrendCount(count: $0.count, users: 0, aggregate: nil) }
    }

    func trendByValue(source: String, query: TrendQuery, property: String, limit: Int, people: Bool) async throws
        -> TrendPass
    {
        ask("trendByValue")
        var rows: [TrendRow] = []
        for (index, events) in byInterval(query, selected(query)) {
            for (value, grouped) in Dictionary(grouping: events, by: { value($0, property).map { ExactText($0) } }) {
                rows.append(TrendRow(index: index, value: value?.text, isOther: false, counted(grouped)))
            }
        }
        let totals = byInterval(query, selected(query)).mapValues { events in
            people ? counted(events) : TrendCount(count: events.count, users: 0, aggregate: nil)
        }
        return TrendPass(rows: rows.count <= limit ? rows : nil, totals: totals)
    }

    func trendBreakdown(source: String, query: TrendQuery, property: String, top: [String]) async throws
        -> [TrendRow]
    {
        ask("trendBreakdown")
        let kept = Set(top.map { ExactText($0) })
        var rows: [TrendRow] = []
        for (index, events) in byInterval(query, selected(query)) {
            let grouped = Dictionary(grouping: events) { event -> String in
                guard let found = value(event, property) else { return "a" }
                return kept.contains(ExactText(found)) ? "t" + found : "o"
            }
            for (key, events) in grouped {
                rows.append(
                    TrendRow(
                        index: index, value: key.first == "t" ? String(key.dropFirst()) : nil, isOther: key == "o",
                        counted(events)))
            }
        }
        return rows
    }

    func funnelRows(source: String, query: FunnelQuery) async throws -> [FunnelRow] {
        ask("funnelRows")
        return events.enumerated().compactMap { sequence, event -> FunnelRow? in
            guard event.timestamp >= query.range.from, event.timestamp < query.range.to + query.window else {
                return nil
            }
            let steps = query.matches(event: event.name, properties: event.properties)
            guard steps != 0 else { return nil }
            let first: String? = steps & 1 == 1 ? query.breakdown.flatMap { self.value(event, $0) } : nil
            return FunnelRow(
                person: event.person, timestamp: event.timestamp, steps: steps, value: first,
                sequence: Int64(sequence))
        }
    }

    func paths(source: String, query: PathQuery, names: [String]) async throws -> [PathCount] {
        ask("paths")
        let code = Dictionary(names.enumerated().map { (ExactText($0.element), Int32($0.offset)) }) { first, _ in first
        }
        let numbered = events.enumerated().filter { code[ExactText($0.element.name)] != nil }
        var anchors: [Int64: PathStep] = [:]
        for (sequence, event) in numbered
        where ExactText(event.name) == ExactText(query.event) && event.timestamp >= query.range.from
            && event.timestamp < query.range.to
        {
            let step = PathStep(time: event.timestamp, seq: Int64(sequence), name: code[ExactText(event.name)]!)
            if anchors[event.person].map({ step.precedes($0) }) ?? true { anchors[event.person] = step }
        }
        var near: [(person: Int64, step: PathStep)] = []
        for (sequence, event) in numbered {
            guard let anchor = anchors[event.person] else { continue }
            let step = PathStep(time: event.timestamp, seq: Int64(sequence), name: code[ExactText(event.name)]!)
            switch query.direction {
            case .after: guard !step.precedes(anchor), step.time <= anchor.time + query.window else { continue }
            case .before: guard !anchor.precedes(step), step.time >= anchor.time - query.window else { continue }
            }
            near.append((event.person, step))
        }
        return PathStep.ways(near, direction: query.direction, steps: query.steps).map {
            PathCount(events: $0.key.map { names[Int($0)] }, people: $0.value)
        }
    }
}
