import Foundation
import TouchpointCore

/// An insight kept with a name: its kind and the parameters of its query, which are its URL.
public struct SavedInsight: Sendable, Hashable {
    /// Its number, given when it was saved.
    public var id: Int64
    /// What people call it.
    public var name: String
    /// Which insight.
    public var kind: InsightKind
    /// The query's parameters, by name (`steps`, `window`, `from`, …).
    public var parameters: [String: String]
    /// When it was saved first and last (ms since 1970).
    public var createdAt: Int64
    public var updatedAt: Int64

    /// The parameters as a query string, sorted by name: what is stored, and the URLs' query.
    var queryString: String { Self.queryString(parameters) }

    static func queryString(_ parameters: [String: String]) -> String {
        parameters.sorted { $0.key < $1.key }
            .map { "\(QueryParameters.encoded($0.key))=\(QueryParameters.encoded($0.value))" }
            .joined(separator: "&")
    }

    /// The parameters of a stored ``queryString`` (``QueryParameters/stored(_:)``).
    static func parameters(ofQuery text: String) -> [String: String] {
        QueryParameters.stored(text)
    }

    /// The query API's URL (without the source).
    var queryURL: String { kind.endpoint + (parameters.isEmpty ? "" : "?" + queryString) }

    var json: JSONValue {
        .object([
            "id": .int(Int(id)), "name": .string(name), "kind": .string(kind.rawValue),
            "parameters": .object(parameters.mapValues(JSONValue.string)), "query": .string(queryURL),
            "createdAt": .string(Timestamp.format(Timestamp.date(milliseconds: createdAt))),
            "updatedAt": .string(Timestamp.format(Timestamp.date(milliseconds: updatedAt))),
        ])
    }
}

/// A page of several saved insights, in the order they are shown.
public struct SavedDashboard: Sendable, Hashable {
    /// Its number, given when it was saved.
    public var id: Int64
    /// What people call it.
    public var name: String
    /// The insights on it, in order.
    public var insights: [Int64]
    /// When it was saved first and last (ms since 1970).
    public var createdAt: Int64
    public var updatedAt: Int64

    var json: JSONValue {
        .object([
            "id": .int(Int(id)), "name": .string(name), "insights": .array(insights.map { .int(Int($0)) }),
            "createdAt": .string(Timestamp.format(Timestamp.date(milliseconds: createdAt))),
            "updatedAt": .string(Timestamp.format(Timestamp.date(milliseconds: updatedAt))),
        ])
    }
}
