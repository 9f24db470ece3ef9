import Foundation
import TouchpointCore

extension SQLStatement {
    /// An event's time as its indexes keep it (`events_minute`, `events_name_minute`): whole
    /// minutes since 1970 (the same integer division in SQL, in both dialects, and in Swift).
    static let minuteExpression = "timestamp / 60000"

    /// The minute of a time in milliseconds, as ``minuteExpression`` computes it.
    static func minute(_ milliseconds: Int64) -> Int64 { milliseconds / 60_000 }

    /// Restricts a query to events whose time is in `range`: on the minute first (what the
    /// indexes hold), then exactly, but only in the first and last minute. SQLite's minute index
    /// does not hold the exact time: written so, a count through it reads the rows of those two
    /// minutes only.
    mutating func appendRange(_ range: TimeRange) {
        if let from = range.fromMilliseconds {
            let minute = Self.minute(from)
            append(" AND \(Self.minuteExpression) >= ")
            bind(.int(minute))
            append(" AND (\(Self.minuteExpression) > ")
            bind(.int(minute))
            append(" OR timestamp >= ")
            bind(.int(from))
            append(")")
        }
        if let to = range.toMilliseconds {
            // The last millisecond before `to` (none before Int64.min: the exact test matches nothing).
            let minute = Self.minute(to == .min ? to : to - 1)
            append(" AND \(Self.minuteExpression) <= ")
            bind(.int(minute))
            append(" AND (\(Self.minuteExpression) < ")
            bind(.int(minute))
            append(" OR timestamp < ")
            bind(.int(to))
            append(")")
        }
    }

    // MARK: The events of a selection

    /// Appends `FROM … WHERE` for some event names of `source` in `from ..< to` that pass
    /// `filters`, through the name-and-minute index, with each event's merge joined (for
    /// ``PersonKeys/expression``); only the events of `people` when given (a cohort's).
    ///
    /// Without `mergesJoined` the events' stored `person_key` is all there is of their person (for
    /// ``PersonKeys/person(ofKey:merges:)``): then no filter may be on people and `people` must be nil.
    mutating func appendEventsNamed(
        _ names: [String], source: String, from: Int64, to: Int64, filters: [PropertyFilter], people: Set<Int64>?,
        mergesJoined: Bool = true
    ) {
        precondition(
            mergesJoined || (people == nil && filters.allSatisfy { $0.scope == .event }),
            "people are found through the merges' join")
        append(" FROM \(dialect.eventsByName)\(mergesJoined ? PersonKeys.join : "") WHERE events.source = ")
        bind(.text(source))
        if names.count == 1 {
            append(" AND event = ")
            bind(.text(names[0]))
        } else {
            append(" AND event IN ")
            bindTuple(names.map { .text($0) })
        }
        appendRange(
            TimeRange(from: Timestamp.date(milliseconds: from), to: Timestamp.date(milliseconds: to)))
        appendFilters(filters, source: source)
        if let people { appendIsIn(PersonKeys.expression, people) }
    }

    /// Appends ` AND (condition)` for each of `filters` (``appendFilter(_:source:)``).
    mutating func appendFilters(_ filters: [PropertyFilter], source: String) {
        for filter in filters {
            append(" AND (")
            appendFilter(filter, source: source)
            append(")")
        }
    }

    /// Appends the condition of `filter` on an `events` row: on its property, or on its person's
    /// newest value of the trait (of the `identify` calls of the person's ids, their merges
    /// followed as ``PersonKeys`` follows them, found through the small index of identify calls).
    mutating func appendFilter(_ filter: PropertyFilter, source: String) {
        let property = filter.property
        guard filter.scope == .person else {
            dialect.appendCondition(
                filter, text: dialect.analyticsPropertyText(property),
                number: dialect.analyticsPropertyNumber(property),
                to: &self)
            return
        }
        // "≠" is every person but those "=" finds, those without the trait included.
        var condition = filter
        if filter.op == .notEquals { condition.op = .equals }
        let person = "COALESCE(m.user_key, ABS(t.person_key))"
        append(
            """
            \(PersonKeys.expression) \(filter.op == .notEquals ? "NOT IN" : "IN") (SELECT p FROM (SELECT \(person) AS p, \
            \(dialect.traitText(property, of: "t")) AS v, \(dialect.traitNumber(property, of: "t")) AS n, \
            ROW_NUMBER() OVER (PARTITION BY \(person) ORDER BY t.seq DESC) AS r FROM events t \
            LEFT JOIN person_merges m ON m.anonymous_key = t.person_key AND t.person_key < 0 WHERE t.source = 
            """)
        bind(.text(source))
        append(
            " AND t.type = 'identify' AND \(dialect.carriesTrait(property, of: "t"))) traits WHERE r = 1 AND ")
        dialect.appendCondition(condition, text: "v", number: "n", to: &self)
        append(")")
    }
}
