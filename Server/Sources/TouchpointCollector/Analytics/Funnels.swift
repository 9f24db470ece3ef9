import Foundation
import TouchpointCore

/// One step of a funnel: an event, optionally only when one property has one value
/// (`checkout[plan=pro]`).
public struct FunnelStep: Sendable, Hashable, CustomStringConvertible {
    /// The event name.
    public var event: String
    /// The property the step filters on, if any.
    public var property: String?
    /// The value the property must have (compared as text: `true`, `3`, `pro`).
    public var value: String?

    /// `event` or `event[property=value]`, as the `steps` parameter spells it.
    public var description: String {
        guard let property else { return event }
        return "\(event)[\(property)=\(value ?? "")]"
    }

    func matches(event name: String, values: [String: String]) -> Bool {
        guard name == event else { return false }
        guard let property else { return true }
        return values[property] == value
    }
}

/// `GET /v1/query/funnel`: of the people who did the first step in the range, how many did each
/// later step in order, within `window` of their first step.
public struct FunnelQuery: Sendable, Hashable {
    /// The steps, in order (2 to 10).
    public var steps: [FunnelStep]
    /// The longest time from the first step to the last, in milliseconds.
    public var window: Int64
    var range: AnalyticsRange

    /// The properties the steps filter on.
    var properties: [String] { Array(Set(steps.compactMap(\.property))).sorted() }
}

/// One event of a person that matters to a funnel.
struct FunnelRow: Sendable, Hashable {
    /// The person's number (``PersonKeys``).
    var person: Int64
    var event: String
    var timestamp: Int64
    /// The filter properties' values, by property.
    var values: [String: String]
}

/// How far people got, step by step.
public struct FunnelResult: Sendable, Hashable {
    /// One step's figures.
    public struct Step: Sendable, Hashable {
        /// The step.
        public var step: FunnelStep
        /// People who reached this step in order within the window.
        public var users: Int
        /// `users` over the first step's.
        public var conversionFromFirst: Double
        /// `users` over the previous step's.
        public var conversionFromPrevious: Double
        /// The median time from the previous step, in seconds (nil for the first step or when no
        /// one reached it).
        public var medianSecondsFromPrevious: Double?

        var json: JSONValue {
            .object([
                "step": .string(step.description), "event": .string(step.event), "users": .int(users),
                "conversionFromFirst": .double(conversionFromFirst),
                "conversionFromPrevious": .double(conversionFromPrevious),
                "medianSecondsFromPrevious": medianSecondsFromPrevious.map(JSONValue.double) ?? .null,
            ])
        }
    }

    /// What was asked.
    public var query: FunnelQuery
    /// Each step's figures, in order.
    public var steps: [Step]

    var json: JSONValue {
        .object([
            "from": .string(Timestamp.format(Timestamp.date(milliseconds: query.range.from))),
            "to": .string(Timestamp.format(Timestamp.date(milliseconds: query.range.to))),
            "windowSeconds": .int(Int(query.window / 1000)), "steps": .array(steps.map(\.json)),
        ])
    }

    /// Works out the funnel from every person's matching events (in any order).
    ///
    /// For each person, every occurrence of the first step in the range is tried as a start, and
    /// each later step is the earliest one after the step before it (ties by order of arrival)
    /// and within the window of the start; the attempt that gets furthest counts (of equal ones,
    /// the first).
    static func compute(_ query: FunnelQuery, rows: [FunnelRow]) -> FunnelResult {
        let count = query.steps.count
        var reached = Array(repeating: 0, count: count)
        var durations = Array(repeating: [Int64](), count: count)
        var byPerson: [Int64: [FunnelRow]] = [:]
        for row in rows { byPerson[row.person, default: []].append(row) }
        for (_, events) in byPerson {
            let sorted = events.enumerated().sorted {
                ($0.element.timestamp, $0.offset) < ($1.element.timestamp, $1.offset)
            }
            .map(\.element)
            let matches = sorted.map { row in
                query.steps.indices.filter { query.steps[$0].matches(event: row.event, values: row.values) }
            }
            var best: [Int64] = []
            for start in sorted.indices where matches[start].contains(0) {
                let startTime = sorted[start].timestamp
                guard startTime >= query.range.from, startTime < query.range.to else { continue }
                var times = [startTime]
                var position = start
                while times.count < count {
                    let step = times.count
                    // The earliest later event that is this step, while still within the window.
                    var next: Int?
                    for index in (position + 1)..<sorted.count {
                        if sorted[index].timestamp - startTime > query.window { break }
                        if matches[index].contains(step) {
                            next = index
                            break
                        }
                    }
                    guard let next else { break }
                    times.append(sorted[next].timestamp)
                    position = next
                }
                if times.count > best.count { best = times }
                if best.count == count { break }
            }
            for step in best.indices {
                reached[step] += 1
                if step > 0 { durations[step].append(best[step] - best[step - 1]) }
            }
        }
        let first = reached.first ?? 0
        let steps = query.steps.indices.map { index in
            let previous = index == 0 ? reached[0] : reached[index - 1]
            return Step(
                step: query.steps[index], users: reached[index],
                conversionFromFirst: first == 0 ? 0 : Double(reached[index]) / Double(first),
                conversionFromPrevious: previous == 0 ? 0 : Double(reached[index]) / Double(previous),
                medianSecondsFromPrevious: index == 0 ? nil : median(durations[index]).map { $0 / 1000 })
        }
        return FunnelResult(query: query, steps: steps)
    }

    /// The median of `values` (the mean of the middle two for an even count), or nil when empty.
    static func median(_ values: [Int64]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        if sorted.count % 2 == 1 { return Double(sorted[middle]) }
        return (Double(sorted[middle - 1]) + Double(sorted[middle])) / 2
    }
}
