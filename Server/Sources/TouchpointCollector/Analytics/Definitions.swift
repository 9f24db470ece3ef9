import Foundation
import TouchpointCore

/// `GET /v1/query/definitions`: the event names a source has stored, the keys of their
/// `properties` and the keys of its people's traits, each with how many stored events carry it,
/// when the last of them arrived and the JSON types of its values. Kept at ingest
/// (``DefinitionCounts``); the dashboard offers them in every event and property field.
public struct Definitions: Sendable, Hashable {
    /// The event names, most frequent first (ties by name).
    public var events: [EventDefinition]
    /// The keys of `identify` calls' `traits`, most frequent first.
    public var traits: [PropertyDefinition]
    /// Whether more event names than the limit asked for exist.
    public var truncated: Bool
    /// Whether the events stored before the collector kept definitions are all counted (false
    /// while it counts them in the background after an upgrade).
    public var complete: Bool

    /// Every event's properties merged by name (counts added, types merged), most frequent first.
    public var properties: [PropertyDefinition] {
        var merged: [ExactText: PropertyDefinition] = [:]
        for event in events {
            for property in event.properties {
                for (type, count) in property.types {
                    merged[ExactText(property.name), default: PropertyDefinition(name: property.name)]
                        .add(type, count, property.lastSeen)
                }
            }
        }
        return PropertyDefinition.sorted(merged)
    }

    var json: JSONValue {
        .object([
            "events": .array(events.map(\.json)), "properties": .array(properties.map(\.json)),
            "traits": .array(traits.map(\.json)), "truncated": .bool(truncated), "complete": .bool(complete),
        ])
    }
}

/// One event name of a source's definitions.
public struct EventDefinition: Sendable, Hashable {
    /// The event name (`event` of a track call, `name` of a page or screen call).
    public var name: String
    /// Stored events with this name.
    public var events: Int
    /// When the newest of them arrived.
    public var lastSeen: Date
    /// The keys of their `properties`, most frequent first.
    public var properties: [PropertyDefinition]

    var json: JSONValue {
        .object([
            "name": .string(name), "events": .int(events), "lastSeen": .string(Timestamp.format(lastSeen)),
            "properties": .array(properties.map(\.json)),
        ])
    }
}

/// One property or trait key of a source's definitions.
public struct PropertyDefinition: Sendable, Hashable {
    /// The key.
    public var name: String
    /// Stored events that carry it.
    public var events = 0
    /// When the newest of them arrived.
    public var lastSeen = Date(timeIntervalSince1970: 0)
    /// How many of them hold a value of each JSON type.
    public var types: [PropertyType: Int] = [:]

    /// The type most of its values have (of equal counts, the first in ``PropertyType``'s order).
    public var type: PropertyType {
        PropertyType.allCases.max { (types[$0] ?? 0, $1.order) < (types[$1] ?? 0, $0.order) } ?? .null
    }

    init(name: String) {
        self.name = name
    }

    mutating func add(_ type: PropertyType, _ count: Int, _ seen: Date) {
        types[type, default: 0] += count
        events += count
        lastSeen = max(lastSeen, seen)
    }

    /// Most frequent first, ties by name (bytewise).
    static func sorted(_ definitions: [ExactText: PropertyDefinition]) -> [PropertyDefinition] {
        definitions.values.sorted { ($1.events, ExactText($0.name)) < ($0.events, ExactText($1.name)) }
    }

    var json: JSONValue {
        .object([
            "name": .string(name), "events": .int(events), "lastSeen": .string(Timestamp.format(lastSeen)),
            "type": .string(type.rawValue),
            "types": .object(Dictionary(uniqueKeysWithValues: types.map { ($0.key.rawValue, .int($0.value)) })),
        ])
    }
}

extension PropertyType {
    /// Its place in ``allCases``.
    fileprivate var order: Int { Self.allCases.firstIndex(of: self) ?? 0 }
}
