import Foundation
import TouchpointCore

/// One step of a funnel: an event, optionally only where its properties meet filters
/// (`checkout[plan=pro;amount>10]`).
public struct FunnelStep: Sendable, Hashable, CustomStringConvertible {
    /// The event name.
    public var event: String
    /// Conditions on the event's properties, all of which must hold.
    public var filters: [PropertyFilter]

    /// A step of `event` whose properties meet `filters`.
    public init(event: String, filters: [PropertyFilter] = []) {
        self.event = event
        self.filters = filters
    }

    /// `event` or `event[filter;filter]`, as the `steps` parameter spells it.
    public var description: String {
        filters.isEmpty ? event : "\(event)[\(filters.map(\.description).joined(separator: ";"))]"
    }

    /// Reads `event` or `event[filter;filter]` (see ``PropertyFilter/parse(_:)``).
    static func parse(_ text: String) throws(PropertyFilter.SyntaxError) -> FunnelStep {
        guard let open = text.firstIndex(of: "[") else {
            guard !text.isEmpty, !text.contains("]") else {
                throw PropertyFilter.SyntaxError(message: "expected an event name, or event[filter], got \"\(text)\"")
            }
            return FunnelStep(event: text)
        }
        let event = String(text[..<open])
        guard !event.isEmpty, text.hasSuffix("]") else {
            throw PropertyFilter.SyntaxError(message: "expected event[filter;filter], got \"\(text)\"")
        }
        let inside = String(text[text.index(after: open)..<text.index(before: text.endIndex)])
        let filters = try PropertyFilter.parseList(inside)
        guard !filters.isEmpty else { throw PropertyFilter.SyntaxError(message: "\"\(text)\": an empty filter") }
        return FunnelStep(event: event, filters: filters)
    }
}

/// `GET /v1/query/funnel`: of the people who did the first step in the range, how many did each
/// later step in order, within `window` of their first step; optionally only events that meet
/// `filters`, only the people of a cohort, and broken down by a property of the first step.
public struct FunnelQuery: Sendable, Hashable {
    /// The steps, in order (2 to 10).
    public var steps: [FunnelStep]
    /// The longest time from the first step to the last, in milliseconds.
    public var window: Int64
    var range: AnalyticsRange
    /// Conditions every step's event must meet (the `where` parameter).
    public var filters: [PropertyFilter] = []
    /// The property whose value on a person's first step puts them in a group of their own.
    public var breakdown: String?
    /// How many of the breakdown's values get a group of their own (the rest are "other").
    public var topValues = 10
    /// The cohort whose people alone count (the `cohort` parameter).
    public var cohort: Int64?
    /// The cohort's people, once resolved (``CollectorQuery``); nil: everyone.
    var people: Set<Int64>?

    /// The steps' event names, each once (told apart by their bytes, as every store tells them),
    /// in byte order.
    var eventNames: [String] {
        Set(steps.map { ExactText($0.event) }).sorted().map(\.text)
    }

    /// The steps that `event` with these properties is (bit `i` for step `i`), by the filters on
    /// event properties; those on a person's traits (`person.…`) are read from their `identify`
    /// calls and left to the caller.
    func matches(event: String, properties: [String: JSONValue]) -> Int {
        // Names by their bytes, as every store compares them.
        func passes(_ filter: PropertyFilter) -> Bool {
            filter.scope == .person || filter.matches(properties[filter.property])
        }
        guard filters.allSatisfy(passes) else { return 0 }
        var mask = 0
        for (index, step) in steps.enumerated()
        where ExactText(step.event) == ExactText(event) && step.filters.allSatisfy(passes) {
            mask |= 1 << index
        }
        return mask
    }
}

/// One event of a person that is a step of a funnel.
struct FunnelRow: Sendable, Hashable {
    /// The person's number (``PersonKeys``; from ClickHouse, the hash of its id).
    var person: Int64
    var timestamp: Int64
    /// The steps the event is (bit `i` for step `i`), its event name and filters considered.
    var steps: Int
    /// The breakdown property's value (nil: absent, or no breakdown).
    var value: String?
    /// The event's order of arrival (its `seq`), which orders a person's events at one time.
    /// ClickHouse keeps no order of arrival: its rows have 0, and a person's events at one time
    /// come in no particular order.
    var sequence: Int64 = 0

    func isStep(_ index: Int) -> Bool { steps & (1 << index) != 0 }
}
