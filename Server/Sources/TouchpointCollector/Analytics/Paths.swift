import Foundation
import TouchpointCore

/// `GET /v1/query/paths`: what people did after (or before) an event: from each person's first
/// occurrence of it in the range, their next (or previous) events within `window`, a run of the
/// same event counted once, as a tree of the most frequent ways with the people on each.
public struct PathQuery: Sendable, Hashable {
    /// Which way from the event the paths go.
    public enum Direction: String, Sendable, Hashable, CaseIterable {
        /// The events after it (`start=`).
        case after
        /// The events before it (`end=`).
        case before

        /// The parameter that names the event.
        var parameter: String { self == .after ? "start" : "end" }
    }

    /// The event the paths start (or end) at.
    public var event: String
    /// After or before it.
    public var direction: Direction
    /// How many events the paths go (1 to 5).
    public var steps: Int
    /// How far from the event a path goes, in milliseconds.
    public var window: Int64
    /// People whose first `event` falls in this range.
    var range: AnalyticsRange
    /// How many of the next events each node lists (the rest are "other").
    public var top: Int
    /// Events left out of the paths, as if they had not happened.
    public var exclude: [String]
    /// The cohort whose people alone count (the `cohort` parameter).
    public var cohort: Int64?
    /// The cohort's people, once resolved (``CollectorQuery``); nil: everyone.
    var people: Set<Int64>?

    /// Where the events read lie: the range, and the window beyond it in the paths' direction.
    var readRange: (from: Int64, to: Int64) {
        direction == .after
            ? (range.from, range.to + window) : (max(0, range.from - window), range.to)
    }
}

/// A way that some people went: the events after (or before) the start, in order, and how many.
struct PathCount: Sendable, Hashable {
    /// The events, nearest first (fewer than the steps when the path ended sooner).
    var events: [String]
    var people: Int
}

/// One node of the paths' tree: an event at one step of the way, and where the people who
/// reached it went next.
public struct PathNode: Sendable, Hashable {
    /// The event; nil for "other".
    public var event: String?
    /// Whether this node holds the next events outside the top ones, together.
    public var isOther: Bool
    /// People whose path reached this node.
    public var people: Int
    /// Of them, those whose path ends here (no further event within the window).
    public var ended: Int
    /// Where the others went, most people first.
    public var children: [PathNode]

    var json: JSONValue {
        var members: [String: JSONValue] = [
            "event": event.map(JSONValue.string) ?? .null, "people": .int(people), "ended": .int(ended),
            "children": .array(children.map(\.json)),
        ]
        if isOther { members["other"] = true }
        return .object(members)
    }
}

/// The paths' tree.
public struct PathResult: Sendable, Hashable {
    /// What was asked.
    public var query: PathQuery
    /// The event itself, with everyone who did it in the range.
    public var root: PathNode

    var json: JSONValue {
        .object([
            query.direction.parameter: .string(query.event), "direction": .string(query.direction.rawValue),
            "steps": .int(query.steps), "top": .int(query.top), "windowSeconds": .int(Int(query.window / 1000)),
            "from": .string(Timestamp.format(Timestamp.date(milliseconds: query.range.from))),
            "to": .string(Timestamp.format(Timestamp.date(milliseconds: query.range.to))),
            "exclude": .array(query.exclude.map(JSONValue.string)),
            "cohort": query.cohort.map { .int(Int($0)) } ?? .null, "people": .int(root.people), "root": root.json,
        ])
    }

    /// The tree of `paths`: each node's next events, the `query.top` most frequent on their own
    /// (ties by name), the rest as "other".
    static func build(_ query: PathQuery, paths: [PathCount]) -> PathResult {
        PathResult(query: query, root: node(event: query.event, paths: paths, depth: 0, top: query.top))
    }

    private static func node(event: String, paths: [PathCount], depth: Int, top: Int) -> PathNode {
        // Names by their bytes, as the stores keep them apart.
        var next: [ExactText: [PathCount]] = [:]
        var ended = 0
        for path in paths {
            guard depth < path.events.count else {
                ended += path.people
                continue
            }
            next[ExactText(path.events[depth]), default: []].append(path)
        }
        let ranked = next.map { (event: $0.key, paths: $0.value, people: $0.value.reduce(0) { $0 + $1.people }) }
            .sorted { ($1.people, $0.event) < ($0.people, $1.event) }
        var children = ranked.prefix(top).map {
            node(event: $0.event.text, paths: $0.paths, depth: depth + 1, top: top)
        }
        let rest = ranked.dropFirst(top).reduce(0) { $0 + $1.people }
        if rest > 0 { children.append(PathNode(event: nil, isOther: true, people: rest, ended: 0, children: [])) }
        return PathNode(
            event: event, isOther: false, people: paths.reduce(0) { $0 + $1.people }, ended: ended, children: children)
    }
}
