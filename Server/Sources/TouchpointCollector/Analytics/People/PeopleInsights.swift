/// The insights that count people per day, week or month, worked out from ``DailyPeople``:
/// unique and active people, retention, stickiness and lifecycle. Pure functions of the sets, so
/// each is tested against a count over events.
enum PeopleInsights {
    // MARK: People per interval

    /// Distinct people on each of `days` (a range of local days per interval).
    static func uniquePeople(_ people: DailyPeople, days: [ClosedRange<Int64>]) -> [Int] {
        days.map { people.union($0).count }
    }

    /// Per interval (its local `days`), the people active in the `window` days that end with the
    /// interval's last day (or with `today`, when that is earlier and within the interval): daily
    /// (1), weekly (7) or monthly (30) active people.
    static func activePeople(_ people: DailyPeople, window: Int64, today: Int64, days: [ClosedRange<Int64>]) -> [Int] {
        days.map { days in
            let end = min(days.upperBound, max(today, days.lowerBound))
            return people.union((end - window + 1)...end).count
        }
    }

    // MARK: Retention

    /// One cohort of a retention triangle.
    struct Cohort: Sendable, Equatable {
        /// The interval's index.
        var index: Int64
        /// People whose first start event in the range falls in it.
        var size: Int
        /// Per period (0 = the cohort's own interval), how many of them did the return event.
        var returned: [Int]
    }

    /// Retention: people grouped by the interval of their first `start` event within intervals
    /// `first ... last` (their cohort), and how many of each did `returns` in each of the
    /// `periods` intervals after (0: the cohort's own). Periods that begin after interval `now`
    /// are left out; each cohort keeps at least period 0.
    static func retention(
        start: DailyPeople, returns: DailyPeople, calendar: SourceCalendar, interval: AnalyticsInterval,
        first: Int64, last: Int64, periods: Int, now: Int64
    ) -> [Cohort] {
        guard first <= last else { return [] }
        let startDays = calendar.days(of: first, through: last, interval)
        let returnDays = calendar.days(of: first, through: last + Int64(periods), interval)
        let returned = returnDays.map { returns.union($0) }
        var seen = PersonSet()
        var cohorts: [Cohort] = []
        for (offset, days) in startDays.enumerated() {
            let index = first + Int64(offset)
            let cohort = start.union(days).subtracting(seen)
            seen.formUnion(cohort)
            let visible = max(0, min(periods, Int(now - index))) + 1
            let counts = (0..<visible).map { period in cohort.intersectionCount(returned[offset + period]) }
            cohorts.append(Cohort(index: index, size: cohort.count, returned: counts))
        }
        return cohorts
    }

    // MARK: Stickiness

    /// Stickiness: per interval `first ... last` (weeks or months), how many people did the event
    /// on exactly 1, 2, … n of its days (`counts[k - 1]` for k days; n is the interval's length).
    static func stickiness(
        _ people: DailyPeople, calendar: SourceCalendar, interval: AnalyticsInterval, first: Int64, last: Int64
    ) -> [[Int]] {
        calendar.days(of: first, through: last, interval).map { days in
            dayCounts(people, days: days)
        }
    }

    /// How many people were active on exactly k of `days`, for k = 1 … the number of days: bit-
    /// sliced counters, 64 people at a time, so the cost follows chunks and days, not people.
    static func dayCounts(_ people: DailyPeople, days: ClosedRange<Int64>) -> [Int] {
        let length = Int(days.upperBound - days.lowerBound + 1)
        var planesNeeded = 1
        while (1 << planesNeeded) <= length { planesNeeded += 1 }
        var histogram = Array(repeating: 0, count: length)
        var chunkIndexes = Set<Int64>()
        let daySets = days.compactMap { people.days[$0] }
        for set in daySets { chunkIndexes.formUnion(set.chunks.keys) }
        let words = PersonSet.wordsPerChunk
        for chunk in chunkIndexes {
            // planes[p][w]: bit p of each person's count of days.
            var planes = Array(repeating: [UInt64](repeating: 0, count: words), count: planesNeeded)
            for set in daySets {
                guard let bits = set.chunks[chunk] else { continue }
                for word in 0..<words {
                    var carry = bits.words[word]
                    var plane = 0
                    while carry != 0, plane < planesNeeded {
                        let sum = planes[plane][word] ^ carry
                        carry &= planes[plane][word]
                        planes[plane][word] = sum
                        plane += 1
                    }
                }
            }
            for word in 0..<words {
                // People with count k: the planes match k's bits.
                var any: UInt64 = 0
                for plane in planes { any |= plane[word] }
                guard any != 0 else { continue }
                for k in 1...length {
                    var match = any
                    for plane in 0..<planesNeeded {
                        match &= (k >> plane) & 1 == 1 ? planes[plane][word] : ~planes[plane][word]
                    }
                    histogram[k - 1] += match.nonzeroBitCount
                }
            }
        }
        return histogram
    }

    // MARK: Lifecycle

    /// One interval of a lifecycle.
    struct Lifecycle: Sendable, Equatable {
        var index: Int64
        /// Did the event for the first time.
        var new: Int
        /// Did it in this interval and the one before.
        var returning: Int
        /// Did it in this interval, not the one before, but at some time before that.
        var resurrecting: Int
        /// Did it in the interval before, not in this one.
        var dormant: Int
    }

    /// Lifecycle per interval `first ... last`. `people` must hold every day from interval
    /// `first - 1` on; `before` every person who did the event before that interval.
    static func lifecycle(
        _ people: DailyPeople, before: PersonSet, calendar: SourceCalendar, interval: AnalyticsInterval,
        first: Int64, last: Int64
    ) -> [Lifecycle] {
        guard first <= last else { return [] }
        let active = calendar.days(of: first - 1, through: last, interval).map { people.union($0) }
        var ever = before.union(active[0])
        var result: [Lifecycle] = []
        for offset in 1..<active.count {
            let now = active[offset]
            let previous = active[offset - 1]
            let new = now.subtracting(ever)
            let returning = now.intersectionCount(previous)
            let resurrecting = now.count - new.count - returning
            result.append(
                Lifecycle(
                    index: first + Int64(offset - 1), new: new.count, returning: returning,
                    resurrecting: resurrecting, dormant: previous.count - returning))
            ever.formUnion(now)
        }
        return result
    }
}
