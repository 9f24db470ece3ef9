import Foundation
import TouchpointCore

/// How far people got, step by step; with a breakdown, the same per value of the first step's
/// property; and how long those who got through took.
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

    /// The funnel of the people whose first step had one value of the breakdown property.
    public struct Group: Sendable, Hashable {
        /// The value; nil for people whose first step lacked the property (or for "other").
        public var value: String?
        /// Whether this group holds every value outside the top ones.
        public var isOther: Bool
        /// Each step's figures for these people.
        public var steps: [Step]

        var json: JSONValue {
            var members: [String: JSONValue] = [
                "value": value.map(JSONValue.string) ?? .null, "steps": .array(steps.map(\.json)),
            ]
            if isOther { members["other"] = true }
            return .object(members)
        }
    }

    /// How long the people who reached the last step took from the first.
    public struct ConversionTimes: Sendable, Hashable {
        /// One bar of the distribution: people who took at least `from` and less than `to`
        /// seconds (the last bar: up to `to` included).
        public struct Bucket: Sendable, Hashable {
            public var fromSeconds: Int64
            public var toSeconds: Int64
            public var users: Int
        }

        /// People who reached the last step.
        public var users: Int
        /// Their median time, in seconds (nil when no one did).
        public var medianSeconds: Double?
        /// The distribution over the window, in buckets of growing width (10 s, 30 s, 1 min, …).
        public var buckets: [Bucket]

        var json: JSONValue {
            .object([
                "users": .int(users), "medianSeconds": medianSeconds.map(JSONValue.double) ?? .null,
                "buckets": .array(
                    buckets.map {
                        .object([
                            "fromSeconds": .int(Int($0.fromSeconds)), "toSeconds": .int(Int($0.toSeconds)),
                            "users": .int($0.users),
                        ])
                    }),
            ])
        }

        /// The bounds of the buckets, in seconds, up to the window.
        static let bounds: [Int64] = [
            0, 10, 30, 60, 300, 900, 1800, 3600, 4 * 3600, 12 * 3600, 86_400, 3 * 86_400, 7 * 86_400, 14 * 86_400,
            30 * 86_400, 60 * 86_400, 90 * 86_400,
        ]

        /// The distribution of `durations` (milliseconds) over a window of `window` milliseconds.
        init(durations: [Int64], window: Int64) {
            let end = max(1, (window + 999) / 1000)
            var edges = Self.bounds.filter { $0 < end }
            edges.append(end)
            var buckets = zip(edges, edges.dropFirst()).map { Bucket(fromSeconds: $0, toSeconds: $1, users: 0) }
            for duration in durations {
                let seconds = Double(duration) / 1000
                let index =
                    buckets.firstIndex { seconds < Double($0.toSeconds) } ?? (buckets.count - 1)
                buckets[index].users += 1
            }
            self.users = durations.count
            self.medianSeconds = FunnelResult.median(durations).map { $0 / 1000 }
            self.buckets = buckets
        }
    }

    /// What was asked.
    public var query: FunnelQuery
    /// Each step's figures, in order.
    public var steps: [Step]
    /// With a breakdown: a group per top value, absent values, and "other"; largest first.
    public var groups: [Group]
    /// The time from the first step to the last of those who reached it.
    public var timeToConvert: ConversionTimes

    var json: JSONValue {
        var members: [String: JSONValue] = [
            "from": .string(Timestamp.format(Timestamp.date(milliseconds: query.range.from))),
            "to": .string(Timestamp.format(Timestamp.date(milliseconds: query.range.to))),
            "windowSeconds": .int(Int(query.window / 1000)), "steps": .array(steps.map(\.json)),
            "timeToConvert": timeToConvert.json,
            "where": .array(query.filters.map { .string($0.description) }),
            "breakdown": query.breakdown.map(JSONValue.string) ?? .null,
            "cohort": query.cohort.map { .int(Int($0)) } ?? .null,
        ]
        if query.breakdown != nil { members["groups"] = .array(groups.map(\.json)) }
        return .object(members)
    }

    /// One person's way through the funnel: when they reached each step they reached, and the
    /// breakdown's value at their first step.
    struct Attempt: Sendable, Hashable {
        var times: [Int64]
        var value: String?
    }

    /// Works out the funnel from every person's step events (in any order).
    ///
    /// For each person, every occurrence of the first step in the range is tried as a start, and
    /// each later step is the earliest one after the step before it (ties by order of arrival)
    /// and within the window of the start; the attempt that gets furthest counts (of equal ones,
    /// the first), and its start's value of the breakdown property puts the person in a group.
    static func compute(_ query: FunnelQuery, rows: [FunnelRow]) -> FunnelResult {
        // One sort puts each person's events together, in time order (ties by arrival), instead
        // of an array a person sorted on its own. It sorts keys of (person, time, arrival), a
        // little over half a row's bytes and no reference, then gathers the rows in their order.
        var keys: [(person: Int64, timestamp: Int64, offset: Int)] = []
        keys.reserveCapacity(rows.count)
        for (offset, row) in rows.enumerated() { keys.append((row.person, row.timestamp, offset)) }
        keys.sort { ($0.person, $0.timestamp, $0.offset) < ($1.person, $1.timestamp, $1.offset) }
        let ordered = keys.map { rows[$0.offset] }
        var attempts: [Attempt] = []
        var first = ordered.startIndex
        while first < ordered.endIndex {
            var end = first + 1
            while end < ordered.endIndex, ordered[end].person == ordered[first].person { end += 1 }
            if let attempt = attempt(query, ordered[first..<end]) { attempts.append(attempt) }
            first = end
        }
        let steps = figures(query, attempts)
        var groups: [Group] = []
        if query.breakdown != nil {
            var byValue: [String?: [Attempt]] = [:]
            for attempt in attempts { byValue[attempt.value, default: []].append(attempt) }
            let top = Set(
                byValue.compactMap { value, attempts in value.map { ($0, attempts.count) } }
                    .sorted { ($1.1, $0.0) < ($0.1, $1.0) }.prefix(query.topValues).map(\.0))
            var other: [Attempt] = []
            for (value, attempts) in byValue {
                if let value, !top.contains(value) {
                    other += attempts
                } else {
                    groups.append(Group(value: value, isOther: false, steps: figures(query, attempts)))
                }
            }
            groups.sort { ($1.steps[0].users, $0.value ?? "") < ($0.steps[0].users, $1.value ?? "") }
            if !other.isEmpty { groups.append(Group(value: nil, isOther: true, steps: figures(query, other))) }
        }
        let last = query.steps.count - 1
        let durations = attempts.filter { $0.times.count > last }.map { $0.times[last] - $0.times[0] }
        return FunnelResult(
            query: query, steps: steps, groups: groups,
            timeToConvert: ConversionTimes(durations: durations, window: query.window))
    }

    /// The person's attempt that gets furthest; nil when they did not start in the range.
    /// `sorted`: the person's events in time order, ties by arrival.
    private static func attempt(_ query: FunnelQuery, _ sorted: ArraySlice<FunnelRow>) -> Attempt? {
        let count = query.steps.count
        var best: Attempt?
        for start in sorted.indices where sorted[start].isStep(0) {
            let startTime = sorted[start].timestamp
            guard startTime >= query.range.from, startTime < query.range.to else { continue }
            var times = [startTime]
            var position = start
            while times.count < count {
                let step = times.count
                // The earliest later event that is this step, while still within the window.
                var next: Int?
                for index in (position + 1)..<sorted.endIndex {
                    if sorted[index].timestamp - startTime > query.window { break }
                    if sorted[index].isStep(step) {
                        next = index
                        break
                    }
                }
                guard let next else { break }
                times.append(sorted[next].timestamp)
                position = next
            }
            if times.count > best?.times.count ?? 0 { best = Attempt(times: times, value: sorted[start].value) }
            if times.count == count { break }
        }
        return best
    }

    /// Each step's figures over `attempts`.
    private static func figures(_ query: FunnelQuery, _ attempts: [Attempt]) -> [Step] {
        var reached = Array(repeating: 0, count: query.steps.count)
        var durations = Array(repeating: [Int64](), count: query.steps.count)
        for attempt in attempts {
            for step in attempt.times.indices {
                reached[step] += 1
                if step > 0 { durations[step].append(attempt.times[step] - attempt.times[step - 1]) }
            }
        }
        let first = reached.first ?? 0
        return query.steps.indices.map { index in
            let previous = index == 0 ? reached[0] : reached[index - 1]
            return Step(
                step: query.steps[index], users: reached[index],
                conversionFromFirst: first == 0 ? 0 : Double(reached[index]) / Double(first),
                conversionFromPrevious: previous == 0 ? 0 : Double(reached[index]) / Double(previous),
                medianSecondsFromPrevious: index == 0 ? nil : median(durations[index]).map { $0 / 1000 })
        }
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
