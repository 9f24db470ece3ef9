import Foundation
import TouchpointCore

/// A user as the collector knows them: first and last seen, how many events, their identify
/// traits merged (the latest value of each trait wins), the anonymous ids merged into them, and
/// the groups they joined with each group's traits.
public struct Person: Sendable, Hashable {
    /// The user id.
    public var userId: String
    /// The first and last event of the user, or of an anonymous id merged into them.
    public var firstSeen: Date
    /// The last event.
    public var lastSeen: Date
    /// Events sent with this user id.
    public var eventCount: Int
    /// Identify traits, merged in arrival order: the latest value of each trait.
    public var traits: [String: JSONValue]
    /// Anonymous ids merged into this user (by an identify carrying both ids, or an alias).
    public var anonymousIds: [String]
    /// Groups the user joined (`group` calls), with each group's traits merged.
    public var groups: [String: [String: JSONValue]]

    var json: JSONValue { .object(jsonMembers) }

    var jsonMembers: [String: JSONValue] {
        [
            "userId": .string(userId), "firstSeen": .string(Timestamp.format(firstSeen)),
            "lastSeen": .string(Timestamp.format(lastSeen)), "eventCount": .int(eventCount),
            "traits": .object(traits), "anonymousIds": .array(anonymousIds.map { .string($0) }),
            "groups": .object(groups.mapValues { .object($0) }),
        ]
    }
}

/// Merges identify (or group) payloads in arrival order: each payload's `traits` members replace
/// the same members before them; other members stay.
enum TraitMerge {
    static func merged(_ payloads: [String]) -> [String: JSONValue] {
        var traits: [String: JSONValue] = [:]
        for payload in payloads {
            guard case .object(let members)? = try? JSONParser.parse(payload),
                case .object(let sent)? = members["traits"]
            else { continue }
            traits.merge(sent) { _, new in new }
        }
        return traits
    }

    /// Group payloads merged per `groupId`, in arrival order.
    static func groups(_ payloads: [String]) -> [String: [String: JSONValue]] {
        var groups: [String: [String]] = [:]
        for payload in payloads {
            guard case .object(let members)? = try? JSONParser.parse(payload),
                let id = members["groupId"]?.stringValue ?? members["groupId"].map({ $0.jsonString() })
            else { continue }
            groups[id, default: []].append(payload)
        }
        return groups.mapValues(merged)
    }
}
