import Foundation
import TouchpointCore

/// Where a source's hours, days, weeks and months begin: local time in the source's time zone
/// (an IANA name such as `Europe/Berlin`; UTC by default).
///
/// Every insight buckets time through one of these, and the activity rollup stores each event
/// under its local day, so a day is the source's calendar day: 23 or 25 hours long when the clocks
/// change. Weeks begin on Monday, months on their first day. An instant's local time is the
/// instant plus the zone's offset at that instant; the day holding it is that divided by a day.
struct SourceCalendar: Sendable, Hashable {
    /// Since 1973-03-03 every zone's offset from UTC is whole minutes (Liberia's was not until
    /// 1972), so every local day, week and month begins on a whole minute.
    static let wholeMinuteOffsetsSince: Int64 = 100_000_000_000

    /// The zone's IANA name.
    let identifier: String
    private let zone: TimeZone
    /// Whether the offset never changes (UTC, or a zone without daylight-saving time), so no
    /// lookup is needed.
    private let fixedOffset: Int64?

    static let hour: Int64 = 3_600_000
    static let day: Int64 = 86_400_000

    /// UTC.
    static let utc = SourceCalendar(validIdentifier: "UTC")

    /// The calendar of the zone named `identifier`; nil when the name is not an IANA zone.
    init?(identifier: String) {
        guard Self.isValid(identifier) else { return nil }
        self.init(validIdentifier: identifier)
    }

    static func == (a: SourceCalendar, b: SourceCalendar) -> Bool { a.identifier == b.identifier }
    func hash(into hasher: inout Hasher) { hasher.combine(identifier) }

    private init(validIdentifier identifier: String) {
        let zone = TimeZone(identifier: identifier) ?? TimeZone(secondsFromGMT: 0)!
        self.identifier = identifier
        self.zone = zone
        // A zone with no transition after 1970 keeps one offset.
        let start = Date(timeIntervalSince1970: 0)
        fixedOffset =
            zone.nextDaylightSavingTimeTransition(after: start) == nil
            ? Int64(zone.secondsFromGMT(for: start)) * 1000 : nil
    }

    /// Whether `identifier` names a zone of the system's time-zone database.
    static func isValid(_ identifier: String) -> Bool {
        guard !identifier.isEmpty, identifier.utf8.count <= 64 else { return false }
        return TimeZone(identifier: identifier) != nil
    }

    /// The zone's offset from UTC at `time` (ms since 1970), in milliseconds.
    func offset(at time: Int64) -> Int64 {
        if let fixedOffset { return fixedOffset }
        return Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(time) / 1000))) * 1000
    }

    /// The instant of the zone's next change of offset after `time`; nil when there is none.
    func nextTransition(after time: Int64) -> Int64? {
        guard fixedOffset == nil,
            let next = zone.nextDaylightSavingTimeTransition(after: Date(timeIntervalSince1970: Double(time) / 1000))
        else { return nil }
        return Int64((next.timeIntervalSince1970 * 1000).rounded())
    }

    /// The local day holding `time`: days since 1970-01-01 in the zone.
    func day(of time: Int64) -> Int64 { Self.floorDivide(time + offset(at: time), Self.day) }

    /// The local hour holding `time`: hours since 1970-01-01 00:00 in the zone.
    func hour(of time: Int64) -> Int64 { Self.floorDivide(time + offset(at: time), Self.hour) }

    /// The instant at which the zone's clocks show `local` (a wall-clock time written as ms since
    /// 1970): the earlier of two in the hour the clocks repeat, the end of a skipped hour for a time
    /// within it.
    func instant(ofLocal local: Int64) -> Int64 {
        firstInstant(where: { $0 + self.offset(at: $0) >= local }, near: local)
    }

    /// The first instant of local day `day` (ms since 1970): its midnight, or the end of a
    /// transition that skipped midnight.
    func start(ofDay day: Int64) -> Int64 {
        firstInstant(where: { self.day(of: $0) >= day }, near: day * Self.day)
    }

    /// The first instant of local hour `hour`.
    func start(ofHour hour: Int64) -> Int64 {
        firstInstant(where: { self.hour(of: $0) >= hour }, near: hour * Self.hour)
    }

    /// The first instant at which `reached` holds, searched within 30 hours of the local time
    /// `local` (`reached` must hold from some instant on).
    private func firstInstant(where reached: (Int64) -> Bool, near local: Int64) -> Int64 {
        if let fixedOffset { return local - fixedOffset }
        var low = local - 30 * Self.hour
        var high = local + 30 * Self.hour
        while low < high {
            let middle = low + (high - low) / 2
            if reached(middle) { high = middle } else { low = middle + 1 }
        }
        return low
    }

    // MARK: Intervals

    /// The index of the interval holding `time`: hours and days since 1970 in local time, weeks
    /// since Monday 1970-01-05, months since January 1970.
    func index(of time: Int64, _ interval: AnalyticsInterval) -> Int64 {
        interval == .hour ? hour(of: time) : index(ofDay: day(of: time), interval)
    }

    /// The index of the day, week or month holding local day `day`.
    func index(ofDay day: Int64, _ interval: AnalyticsInterval) -> Int64 {
        switch interval {
        case .hour: day * 24
        case .day: day
        case .week: Self.floorDivide(day - 4, 7)
        case .month: Self.month(ofDay: day)
        }
    }

    /// The first local day of interval `index` (for hours, the day holding it).
    func firstDay(of index: Int64, _ interval: AnalyticsInterval) -> Int64 {
        switch interval {
        case .hour: Self.floorDivide(index, 24)
        case .day: index
        case .week: index * 7 + 4
        case .month: Self.firstDay(ofMonth: index)
        }
    }

    /// The first instant of interval `index` (ms since 1970).
    func start(of index: Int64, _ interval: AnalyticsInterval) -> Int64 {
        interval == .hour ? start(ofHour: index) : start(ofDay: firstDay(of: index, interval))
    }

    /// The local days of intervals `first ... last`, each interval's as a range.
    func days(of first: Int64, through last: Int64, _ interval: AnalyticsInterval) -> [ClosedRange<Int64>] {
        guard first <= last else { return [] }
        return (first...last).map { index in
            firstDay(of: index, interval)...(firstDay(of: index + 1, interval) - 1)
        }
    }

    // MARK: SQL

    /// The instants in `from ..< to` at which the zone's offset changes, each with the offset
    /// from then on, after the offset in force at `from`.
    func offsets(from: Int64, to: Int64) -> [(since: Int64, offset: Int64)] {
        var segments = [(since: from, offset: offset(at: from))]
        guard fixedOffset == nil else { return segments }
        var date = Date(timeIntervalSince1970: Double(from) / 1000)
        while let next = zone.nextDaylightSavingTimeTransition(after: date) {
            let since = Int64((next.timeIntervalSince1970 * 1000).rounded())
            guard since < to else { break }
            segments.append((since, offset(at: since)))
            date = next
        }
        return segments
    }

    /// SQL for the local day of `column` (ms since 1970) for times in `from ..< to`: the time plus
    /// the offset of its segment (``offsets(from:to:)``), floored to a day. Times at least two days
    /// after 1970 in local time. `quotient` writes the whole quotient of two non-negative integers
    /// (``slashQuotient(_:_:)`` for SQLite and PostgreSQL, whose `/` of integers is one).
    func sqlDay(
        _ column: String, from: Int64, to: Int64, quotient: (String, Int64) -> String = SourceCalendar.slashQuotient
    ) -> String {
        let segments = offsets(from: from, to: to)
        func day(_ offset: Int64) -> String { "(\(quotient("\(column) + \(offset + 2 * Self.day)", Self.day)) - 2)" }
        guard segments.count > 1 else { return day(segments[0].offset) }
        var sql = "(CASE"
        for index in 0..<(segments.count - 1) {
            sql += " WHEN \(column) < \(segments[index + 1].since) THEN \(day(segments[index].offset))"
        }
        return sql + " ELSE \(day(segments[segments.count - 1].offset)) END)"
    }

    /// `(dividend) / divisor`: SQLite's and PostgreSQL's `/` of two integers is their whole quotient.
    static func slashQuotient(_ dividend: String, _ divisor: Int64) -> String { "((\(dividend)) / \(divisor))" }

    /// SQL for the index of the interval holding `column`, for times in `from ..< to` (as
    /// ``index(of:_:)`` computes it).
    func sqlIndex(
        _ column: String, _ interval: AnalyticsInterval, from: Int64, to: Int64,
        quotient: (String, Int64) -> String = SourceCalendar.slashQuotient
    ) -> String {
        switch interval {
        case .hour:
            let segments = offsets(from: from, to: to)
            func hour(_ offset: Int64) -> String {
                "(\(quotient("\(column) + \(offset + 48 * Self.hour)", Self.hour)) - 48)"
            }
            guard segments.count > 1 else { return hour(segments[0].offset) }
            var sql = "(CASE"
            for index in 0..<(segments.count - 1) {
                sql += " WHEN \(column) < \(segments[index + 1].since) THEN \(hour(segments[index].offset))"
            }
            return sql + " ELSE \(hour(segments[segments.count - 1].offset)) END)"
        case .day:
            return sqlDay(column, from: from, to: to, quotient: quotient)
        case .week:
            // floor((day - 4) / 7) for days from -2 on.
            return "(\(quotient("\(sqlDay(column, from: from, to: to, quotient: quotient)) + 10", 7)) - 2)"
        case .month:
            // The months' first instants, compared in order.
            let first = index(of: from, .month)
            let last = index(of: max(from, to - 1), .month)
            guard first < last else { return "\(first)" }
            var sql = "(CASE"
            for month in (first + 1)...last {
                sql += " WHEN \(column) < \(start(of: month, .month)) THEN \(month - 1)"
            }
            return sql + " ELSE \(last) END)"
        }
    }

    // MARK: Text

    /// The local date of `time`: `2026-03-29`.
    func date(of time: Int64) -> String {
        let date = Self.civil(ofDay: day(of: time))
        return "\(date.year)-\(Self.twoDigits(date.month))-\(Self.twoDigits(date.day))"
    }

    /// The local date and minute of `time`: `2026-03-29 14:05`.
    func minute(of time: Int64) -> String {
        let local = time + offset(at: time)
        let minutes = Self.floorDivide(local, 60_000) - Self.floorDivide(local, Self.day) * 1440
        return "\(date(of: time)) \(Self.twoDigits(minutes / 60)):\(Self.twoDigits(minutes % 60))"
    }

    private static func twoDigits(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }

    // MARK: Civil dates

    /// `a / b` rounded down (`b` > 0).
    static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }

    /// The year, month (1…12) and day (1…31) of day `day` since 1970-01-01 (proleptic Gregorian).
    static func civil(ofDay day: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let date = Timestamp.civilDate(fromDays: Int(day))
        return (Int64(date.year), Int64(date.month), Int64(date.day))
    }

    /// Day since 1970-01-01 of a civil date (proleptic Gregorian).
    static func day(year: Int64, month: Int64, day: Int64) -> Int64 {
        Int64(Timestamp.daysFromCivil(year: Int(year), month: Int(month), day: Int(day)))
    }

    /// Months since January 1970 of local day `day`.
    static func month(ofDay day: Int64) -> Int64 {
        let date = civil(ofDay: day)
        return (date.year - 1970) * 12 + date.month - 1
    }

    /// The first local day of month `month` (months since January 1970).
    static func firstDay(ofMonth month: Int64) -> Int64 {
        let year = 1970 + floorDivide(month, 12)
        return day(year: year, month: month - floorDivide(month, 12) * 12 + 1, day: 1)
    }
}

/// A ``SourceCalendar`` that remembers the span of its last offset: the local day of each event
/// an ingest write stores, without asking the zone for each (a lookup costs about 0.3 µs).
struct DayLookup: Sendable {
    let calendar: SourceCalendar
    /// `from ..< until` has one offset.
    private var from = Int64.max
    private var until = Int64.min
    private var offset: Int64 = 0

    init(_ calendar: SourceCalendar) { self.calendar = calendar }

    /// The local day holding `time` (``SourceCalendar/day(of:)``).
    mutating func day(of time: Int64) -> Int64 {
        if time < from || time >= until {
            let offset = calendar.offset(at: time)
            let until = calendar.nextTransition(after: time) ?? .max
            if offset == self.offset, until == self.until {
                from = min(from, time)
            } else {
                (self.from, self.until, self.offset) = (time, until, offset)
            }
        }
        return SourceCalendar.floorDivide(time + offset, SourceCalendar.day)
    }
}
