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

    /// Every person's way through the funnel, side by side: attempt `i` reached `reached[i]`
    /// steps, at `times[i * width..<i * width + reached[i]]`, and its first step's breakdown value
    /// is `values[i]`. Flat arrays, so a million people take three allocations, not a million.
    struct Attempts {
        /// The funnel's number of steps.
        let width: Int
        var reached: [Int] = []
        var times: [Int64] = []
        var values: [String?] = []

        /// The time of attempt `attempt`'s step `step` (one it reached).
        func time(_ attempt: Int, _ step: Int) -> Int64 { times[attempt * width + step] }
    }

    /// Works out the funnel from every person's step events (in any order).
    ///
    /// For each person, every occurrence of the first step in the range is tried as a start, and
    /// each later step is the earliest one after the step before it (ties by order of arrival,
    /// ``FunnelRow/sequence``) and within the window of the start; the attempt that gets furthest
    /// counts (of equal ones, the first), and its start's value of the breakdown property puts the
    /// person in a group.
    static func compute(_ query: FunnelQuery, rows: [FunnelRow]) -> FunnelResult {
        let order = personOrder(rows)
        var attempts = Attempts(width: query.steps.count)
        var scratch = [Int64](repeating: 0, count: attempts.width)
        var first = order.startIndex
        while first < order.endIndex {
            var end = first + 1
            while end < order.endIndex, order[end].person == order[first].person { end += 1 }
            attempt(query, order[first..<end], rows, into: &attempts, scratch: &scratch)
            first = end
        }
        let everyone = Array(attempts.reached.indices)
        let steps = figures(query, attempts, everyone)
        var groups: [Group] = []
        if query.breakdown != nil {
            // Values by their bytes, as the stores give them (``ExactText``).
            var byValue: [ExactText?: [Int]] = [:]
            for (index, value) in attempts.values.enumerated() {
                byValue[value.map({ ExactText($0) }), default: []].append(index)
            }
            let top = Set(
                byValue.compactMap { value, members in value.map { ($0, members.count) } }
                    .sorted { ($1.1, $0.0) < ($0.1, $1.0) }.prefix(query.topValues).map(\.0))
            var other: [Int] = []
            for (value, members) in byValue {
                if let value, !top.contains(value) {
                    other += members
                } else {
                    groups.append(Group(value: value?.text, isOther: false, steps: figures(query, attempts, members)))
                }
            }
            groups.sort {
                ($1.steps[0].users, ExactText($0.value ?? "")) < ($0.steps[0].users, ExactText($1.value ?? ""))
            }
            if !other.isEmpty {
                groups.append(Group(value: nil, isOther: true, steps: figures(query, attempts, other)))
            }
        }
        let last = query.steps.count - 1
        let durations = everyone.filter { attempts.reached[$0] > last }.map {
            attempts.time($0, last) - attempts.time($0, 0)
        }
        return FunnelResult(
            query: query, steps: steps, groups: groups,
            timeToConvert: ConversionTimes(durations: durations, window: query.window))
    }

    /// Adds the person's attempt that gets furthest to `attempts`, unless they did not start in
    /// the range. `sorted`: the person's events in time order, ties by arrival; `scratch`: room
    /// for one attempt's times.
    private static func attempt(
        _ query: FunnelQuery, _ sorted: ArraySlice<OrderedRow>, _ rows: [FunnelRow], into attempts: inout Attempts,
        scratch: inout [Int64]
    ) {
        let count = query.steps.count
        let base = attempts.times.count
        var best = 0
        var bestStart = 0
        for start in sorted.indices where sorted[start].isStep(0) {
            let startTime = sorted[start].timestamp
            guard startTime >= query.range.from, startTime < query.range.to else { continue }
            scratch[0] = startTime
            var reached = 1
            var position = start
            while reached < count {
                // The earliest later event that is this step, while still within the window.
                var next: Int?
                for index in (position + 1)..<sorted.endIndex {
                    if sorted[index].timestamp - startTime > query.window { break }
                    if sorted[index].isStep(reached) {
                        next = index
                        break
                    }
                }
                guard let next else { break }
                scratch[reached] = sorted[next].timestamp
                reached += 1
                position = next
            }
            if reached > best {
                if best == 0 { attempts.times.append(contentsOf: repeatElement(0, count: count)) }
                attempts.times.replaceSubrange(base..<base + reached, with: scratch[0..<reached])
                best = reached
                bestStart = start
            }
            if reached == count { break }
        }
        guard best > 0 else { return }
        attempts.reached.append(best)
        attempts.values.append(rows[Int(sorted[bestStart].offset)].value)
    }

    /// A row's place in ``personOrder(_:)``: what the funnel compares and tests, 32 bytes and no
    /// reference, and where the row is (for its breakdown value).
    struct OrderedRow: Sendable, Hashable {
        var person: Int64
        var timestamp: Int64
        /// The event's order of arrival (``FunnelRow/sequence``).
        var sequence: Int64
        /// The row's index in the rows.
        var offset: UInt32
        var steps: UInt32

        func isStep(_ index: Int) -> Bool { steps & (1 << index) != 0 }
    }

    /// The rows with each person's together and in time order, ties by arrival (their
    /// ``FunnelRow/sequence``, then the rows' order); people in no particular order.
    ///
    /// Rather than sorting every row by person, the rows are dealt by a hash of their person into
    /// buckets of two to four rows on average (a counting sort: two passes, no comparison), and
    /// only each bucket is sorted. A person's rows all land in one bucket, and the bucket's sort
    /// parts them from those of the few other people there. Up to 2³² rows (an offset is 32 bits).
    static func personOrder(_ rows: [FunnelRow]) -> [OrderedRow] {
        let bits = max(1, min(24, Int.bitWidth - (rows.count / 4).leadingZeroBitCount))
        let shift = UInt64(UInt64.bitWidth - bits)
        // Fibonacci hashing: person numbers and CityHash64 values both spread over the buckets.
        func bucket(_ person: Int64) -> Int {
            Int(truncatingIfNeeded: (UInt64(bitPattern: person) &* 0x9E37_79B9_7F4A_7C15) >> shift)
        }
        var starts = [Int](repeating: 0, count: (1 << bits) + 1)
        for row in rows { starts[bucket(row.person) + 1] += 1 }
        for index in 1..<starts.count { starts[index] += starts[index - 1] }
        var next = starts
        var order = [OrderedRow](
            unsafeUninitializedCapacity: rows.count,
            initializingWith: { buffer, initialized in
                for (offset, row) in rows.enumerated() {
                    let slot = bucket(row.person)
                    (buffer.baseAddress! + next[slot]).initialize(
                        to: OrderedRow(
                            person: row.person, timestamp: row.timestamp, sequence: row.sequence,
                            offset: UInt32(offset),
                            steps: UInt32(truncatingIfNeeded: row.steps)))
                    next[slot] += 1
                }
                initialized = rows.count
            })
        for slot in 0..<(starts.count - 1) where starts[slot + 1] - starts[slot] > 1 {
            order[starts[slot]..<starts[slot + 1]].sort {
                ($0.person, $0.timestamp, $0.sequence, $0.offset) < ($1.person, $1.timestamp, $1.sequence, $1.offset)
            }
        }
        return order
    }

    /// Each step's figures over the attempts numbered `members`.
    private static func figures(_ query: FunnelQuery, _ attempts: Attempts, _ members: [Int]) -> [Step] {
        var reached = Array(repeating: 0, count: query.steps.count)
        var durations = Array(repeating: [Int64](), count: query.steps.count)
        for attempt in members {
            for step in 0..<attempts.reached[attempt] {
                reached[step] += 1
                if step > 0 { durations[step].append(attempts.time(attempt, step) - attempts.time(attempt, step - 1)) }
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
    ///
    /// Found by selection, without sorting: each pass parts the values around one of them and
    /// goes on in the part that holds the middle (linear time on average).
    static func median(_ values: [Int64]) -> Double? {
        guard !values.isEmpty else { return nil }
        var values = values
        let middle = values.count / 2
        let upper = select(&values, middle)
        if values.count % 2 == 1 { return Double(upper) }
        // The values before `middle` are now those not above it; the largest is the lower middle.
        return (Double(values[..<middle].max()!) + Double(upper)) / 2
    }

    /// The value that would be at `index` were `values` sorted. Leaves the values before `index`
    /// not above it, those after not below.
    private static func select(_ values: inout [Int64], _ index: Int) -> Int64 {
        var low = 0
        var high = values.count - 1
        while low < high {
            // The median of three as the pivot, so sorted and reversed values take no longer.
            let pivot = Swift.max(
                Swift.min(values[low], values[high]),
                Swift.min(Swift.max(values[low], values[high]), values[(low + high) / 2]))
            var left = low
            var right = high
            while left <= right {
                while values[left] < pivot { left += 1 }
                while values[right] > pivot { right -= 1 }
                if left <= right {
                    values.swapAt(left, right)
                    left += 1
                    right -= 1
                }
            }
            if index <= right {
                high = right
            } else if index >= left {
                low = left
            } else {
                return values[index]
            }
        }
        return values[index]
    }
}
