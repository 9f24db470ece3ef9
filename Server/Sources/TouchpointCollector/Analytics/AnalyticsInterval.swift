import Foundation
import TouchpointCore

/// The width of a trend or retention interval, and where intervals start: hours and days at UTC
/// midnight's grid, weeks on Mondays (UTC).
public enum AnalyticsInterval: String, Sendable, Hashable, CaseIterable {
    case hour
    case day
    case week

    /// The interval's length in milliseconds.
    var milliseconds: Int64 {
        switch self {
        case .hour: 3_600_000
        case .day: 86_400_000
        case .week: 604_800_000
        }
    }

    /// Where the grid starts: 1970-01-01 for hours and days, Monday 1970-01-05 for weeks.
    var origin: Int64 { self == .week ? 4 * 86_400_000 : 0 }

    /// The index of the interval holding `time` (ms since 1970), as the SQL expression computes it.
    func index(of time: Int64) -> Int64 {
        let offset = time - origin
        // Floor division, so times before the origin fall into earlier intervals.
        return offset >= 0 ? offset / milliseconds : -((-offset + milliseconds - 1) / milliseconds)
    }

    /// The start of interval `index`, in ms since 1970.
    func start(of index: Int64) -> Int64 { origin + index * milliseconds }

    /// The SQL for the interval index of the `timestamp` column (times after 1970 only; the
    /// analytics queries refuse earlier ranges).
    var sqlIndex: String { "((timestamp - \(origin)) / \(milliseconds))" }
}

/// A validated analytics range: both ends set, `from < to`, and a bounded number of intervals.
struct AnalyticsRange: Sendable, Hashable {
    var from: Int64
    var to: Int64

    var timeRange: TimeRange {
        TimeRange(from: Timestamp.date(milliseconds: from), to: Timestamp.date(milliseconds: to))
    }
}

/// A property name that may be used in a breakdown or a step filter: letters, digits and `_`,
/// starting with a letter or `_`, at most 64 characters (it becomes part of a JSON path).
enum PropertyName {
    static func isValid(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.unicodeScalars.count <= 64 else { return false }
        func letter(_ scalar: Unicode.Scalar) -> Bool {
            (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z") || scalar == "_"
        }
        return letter(first) && name.unicodeScalars.allSatisfy { letter($0) || ($0 >= "0" && $0 <= "9") }
    }
}
