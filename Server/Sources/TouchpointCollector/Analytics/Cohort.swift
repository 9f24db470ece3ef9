import Foundation
import TouchpointCore

/// A saved definition of people, kept in the collector's database: everyone who meets all its
/// conditions at the time it is asked (`cohort=` on every insight; `/v1/cohorts`).
public struct Cohort: Sendable, Hashable {
    /// The cohort's number, given when it was saved.
    public var id: Int64
    /// What people call it.
    public var name: String
    /// What a person must meet, all of it.
    public var conditions: [CohortCondition]
    /// When it was saved first and last (ms since 1970).
    public var createdAt: Int64
    public var updatedAt: Int64

    var json: JSONValue {
        .object([
            "id": .int(Int(id)), "name": .string(name), "conditions": .array(conditions.map(\.json)),
            "createdAt": .string(Timestamp.format(Timestamp.date(milliseconds: createdAt))),
            "updatedAt": .string(Timestamp.format(Timestamp.date(milliseconds: updatedAt))),
        ])
    }

    /// The definition as stored: `{"conditions": [...]}`.
    var definition: String { JSONValue.object(["conditions": .array(conditions.map(\.json))]).jsonString() }
}

/// One condition of a ``Cohort``.
public enum CohortCondition: Sendable, Hashable, CustomStringConvertible {
    /// Did `event` at least `times` times in the last `days` days.
    case performed(event: String, times: Int, days: Int)
    /// The person's trait (their `identify` traits merged, the latest value of each) meets the
    /// filter; only people with a user id have traits.
    case trait(PropertyFilter)

    /// `{"event": "open", "atLeast": 3, "days": 7}` or `{"trait": "plan", "operator": "=", "value": "pro"}`.
    var json: JSONValue {
        switch self {
        case .performed(let event, let times, let days):
            .object(["event": .string(event), "atLeast": .int(times), "days": .int(days)])
        case .trait(let filter):
            .object([
                "trait": .string(filter.property), "operator": .string(filter.op.name),
                "value": .string(filter.value),
            ])
        }
    }

    /// `open at least 3 times in the last 7 days`, `plan = pro`.
    public var description: String {
        switch self {
        case .performed(let event, let times, let days):
            "\(event) at least \(times == 1 ? "once" : "\(times) times") in the last \(days == 1 ? "day" : "\(days) days")"
        case .trait(let filter):
            filter.op == .isSet
                ? "\(filter.property) is set" : "\(filter.property) \(filter.op.symbol) \(filter.value)"
        }
    }

    /// Reads a condition's JSON; `path` names it in errors (`conditions[1]`).
    static func parse(_ value: JSONValue, path: String) throws(CollectorError) -> CohortCondition {
        guard case .object(let members) = value else {
            throw CollectorError(.invalidRequest, "\(path): expected an object, found \(value.typeName)", path: path)
        }
        func invalid(_ member: String, _ message: String) -> CollectorError {
            CollectorError(.invalidRequest, "\(path).\(member): \(message)", path: "\(path).\(member)")
        }
        func number(_ member: String, _ bounds: ClosedRange<Int>, default fallback: Int) throws(CollectorError) -> Int {
            guard let found = members[member] else { return fallback }
            guard let number = found.intValue, found.doubleValue == Double(number), bounds.contains(number) else {
                throw invalid(member, "expected a whole number from \(bounds.lowerBound) to \(bounds.upperBound)")
            }
            return number
        }
        func text(_ member: String) throws(CollectorError) -> String? {
            guard let found = members[member] else { return nil }
            guard case .string(let text) = found, !text.isEmpty, text.utf8.count <= 200 else {
                throw invalid(member, "expected a string of 1 to 200 bytes, found \(found.jsonString())")
            }
            return text
        }
        if let event = try text("event") {
            return .performed(
                event: event, times: try number("atLeast", 1...100_000, default: 1),
                days: try number("days", 1...3650, default: 30))
        }
        guard let trait = try text("trait") else {
            throw CollectorError(
                .invalidRequest, "\(path): expected \"event\" (with \"atLeast\" and \"days\") or \"trait\"", path: path)
        }
        let name = try text("operator") ?? "="
        guard let comparison = PropertyFilter.Operator(name: name) else {
            throw invalid("operator", "expected =, !=, contains, >, < or is set, found \"\(name)\"")
        }
        var value = ""
        if comparison != .isSet {
            guard case .string(let found)? = members["value"] else {
                throw invalid("value", "expected a string")
            }
            value = found
        }
        do {
            return .trait(try PropertyFilter(property: trait, op: comparison, value: value).validated())
        } catch {
            throw invalid("trait", error.message)
        }
    }

    /// Reads a cohort's conditions (1 to 10) from a body's `conditions`.
    static func parseList(_ value: JSONValue?) throws(CollectorError) -> [CohortCondition] {
        guard case .array(let items)? = value, (1...10).contains(items.count) else {
            throw CollectorError(
                .invalidRequest, "conditions: expected an array of 1 to 10 conditions", path: "conditions")
        }
        var conditions: [CohortCondition] = []
        for (index, item) in items.enumerated() {
            conditions.append(try parse(item, path: "conditions[\(index)]"))
        }
        return conditions
    }
}

/// A person in a cohort, as the members list shows them.
public struct CohortMember: Sendable, Hashable {
    /// The person's number (``PersonKeys``).
    var person: Int64
    /// Their user id, or the anonymous id they are known by.
    public var id: String
    /// Whether `id` is a user id (one with a profile).
    public var isUser: Bool
    /// When a user was last seen (nil for an anonymous id).
    public var lastSeen: Date?

    var json: JSONValue {
        .object([
            "id": .string(id), "isUser": .bool(isUser),
            "lastSeen": lastSeen.map { .string(Timestamp.format($0)) } ?? .null,
        ])
    }
}
