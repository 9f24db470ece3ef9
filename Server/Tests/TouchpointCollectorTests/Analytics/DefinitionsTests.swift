import Foundation
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// The definitions (event names, property keys, traits) kept at ingest equal what counting the
/// stored events gives, after ingest through the decoder and from Swift, resends, a user's
/// deletion, retention and PostgreSQL's folds; and the events stored before the upgrade are
/// counted by the backfill, deletions meanwhile included.
struct DefinitionsTests {
    /// What counting the stored events gives: per event name its events and newest arrival; per
    /// event and property, and per trait, events by JSON type and the newest arrival.
    struct Counted: Equatable, CustomStringConvertible {
        var events: [String: Int] = [:]
        var eventsSeen: [String: Int64] = [:]
        var properties: [String: [String: [String: Int]]] = [:]
        var propertiesSeen: [String: [String: Int64]] = [:]
        var traits: [String: [String: Int]] = [:]
        var traitsSeen: [String: Int64] = [:]

        var description: String { "events \(events), properties \(properties), traits \(traits)" }

        /// Without the arrival times (which a deletion leaves as they were).
        var counts: Counted {
            Counted(events: events, properties: properties, traits: traits)
        }
    }

    static func typeName(_ value: JSONValue) -> String {
        switch value {
        case .string: "string"
        case .int, .double: "number"
        case .bool: "boolean"
        case .object: "object"
        case .array: "array"
        case .null: "null"
        }
    }

    /// Counts `source`'s stored events, each read back as the message it was (the export).
    static func counted(_ storage: SQLCollectorStorage, source: String) async throws -> Counted {
        var counted = Counted()
        var page = try await storage.exportPage(source: source, range: TimeRange(), page: PageRequest(limit: 500))
        while true {
            for line in page.items {
                let entry = try JSONParser.parse(line)
                guard let message = entry["message"], let type = message["type"]?.stringValue,
                    let received = entry["receivedAt"]?.stringValue.flatMap(Timestamp.parse).map(Timestamp.milliseconds)
                else { continue }
                func count(
                    _ members: JSONValue?, into counts: inout [String: [String: Int]], seen: inout [String: Int64]
                ) {
                    guard case .object(let keys)? = members else { return }
                    for (key, value) in keys {
                        counts[key, default: [:]][typeName(value), default: 0] += 1
                        seen[key] = max(seen[key] ?? 0, received)
                    }
                }
                switch type {
                case "track", "page", "screen":
                    guard let name = message[type == "track" ? "event" : "name"]?.stringValue else { continue }
                    counted.events[name, default: 0] += 1
                    counted.eventsSeen[name] = max(counted.eventsSeen[name] ?? 0, received)
                    var properties = counted.properties[name] ?? [:]
                    var seen = counted.propertiesSeen[name] ?? [:]
                    count(message["properties"], into: &properties, seen: &seen)
                    if !properties.isEmpty { counted.properties[name] = properties }
                    if !seen.isEmpty { counted.propertiesSeen[name] = seen }
                case "identify":
                    count(message["traits"], into: &counted.traits, seen: &counted.traitsSeen)
                default:
                    continue
                }
            }
            guard let cursor = page.nextCursor else { break }
            page = try await storage.exportPage(
                source: source, range: TimeRange(), page: PageRequest(limit: 500, cursor: cursor))
        }
        return counted
    }

    /// What the definitions say, in the same shape.
    static func kept(_ storage: SQLCollectorStorage, source: String) async throws -> Counted {
        let definitions = try await storage.definitions(source: source, event: nil, limit: 10_000)
        #expect(!definitions.truncated)
        var kept = Counted()
        func milliseconds(_ date: Date) -> Int64 { Timestamp.milliseconds(date) }
        for event in definitions.events {
            kept.events[event.name] = event.events
            kept.eventsSeen[event.name] = milliseconds(event.lastSeen)
            for property in event.properties {
                kept.properties[event.name, default: [:]][property.name] = Dictionary(
                    uniqueKeysWithValues: property.types.map { ($0.key.rawValue, $0.value) })
                kept.propertiesSeen[event.name, default: [:]][property.name] = milliseconds(property.lastSeen)
                #expect(property.events == property.types.values.reduce(0, +))
            }
        }
        for trait in definitions.traits {
            kept.traits[trait.name] = Dictionary(uniqueKeysWithValues: trait.types.map { ($0.key.rawValue, $0.value) })
            kept.traitsSeen[trait.name] = milliseconds(trait.lastSeen)
        }
        return kept
    }

    static func expectKept(
        _ storage: SQLCollectorStorage, sources: [String], times: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        for source in sources {
            let counted = try await counted(storage, source: source)
            let kept = try await kept(storage, source: source)
            #expect(
                times ? kept == counted : kept.counts == counted.counts, "\(source)", sourceLocation: sourceLocation)
        }
    }

    /// Batches as SDKs send them, with properties and traits of every JSON type, keys sent twice
    /// (the last counts), escaped and non-ASCII keys, unnamed pages, groups and aliases.
    static func bodies(seed: UInt64) -> [String] {
        var random = SeededRandomNumberGenerator(seed: seed)
        let names = ["open", "view", "buy", "search"]
        let values = [#""pro""#, "3", "2.5", "true", "false", "null", #"{"a":1}"#, "[1,2]", #""""#]
        let keys = ["plan", "amount", "coupon", "größe", "", "pl\\u0061n", "nested"]
        var bodies: [String] = []
        for batch in 0..<6 {
            var messages: [String] = []
            for index in 0..<30 {
                let id = "\"messageId\":\"m-\(seed)-\(batch)-\(index)\""
                let who =
                    "\"anonymousId\":\"a\(random.next() % 8)\""
                    + (random.next() % 3 == 0 ? ",\"userId\":\"u\(random.next() % 4)\"" : "")
                var members: [String] = []
                for _ in 0..<(random.next() % 5) {
                    let key = keys[Int(random.next() % UInt64(keys.count))]
                    members.append("\"\(key)\":\(values[Int(random.next() % UInt64(values.count))])")
                }
                let object = "{\(members.joined(separator: ","))}"
                switch random.next() % 10 {
                case 0:
                    messages.append("{\"type\":\"identify\",\(id),\(who),\"traits\":\(object)}")
                case 1:
                    messages.append("{\"type\":\"page\",\(id),\(who),\"properties\":\(object)}")
                case 2:
                    messages.append("{\"type\":\"screen\",\(id),\(who),\"name\":\"Home\",\"properties\":\(object)}")
                case 3:
                    messages.append("{\"type\":\"group\",\(id),\(who),\"groupId\":\"g\",\"traits\":\(object)}")
                case 4:
                    // `properties` twice: the last counts.
                    messages.append(
                        "{\"type\":\"track\",\(id),\(who),\"event\":\"twice\",\"properties\":{\"first\":1},\"properties\":\(object)}"
                    )
                default:
                    let name = names[Int(random.next() % UInt64(names.count))]
                    messages.append(
                        "{\"type\":\"track\",\(id),\(who),\"event\":\"\(name)\",\"context\":{\"sessionId\":\"s\(index % 3)\"},\"properties\":\(object)}"
                    )
                }
            }
            bodies.append("{\"batch\":[\(messages.joined(separator: ","))]}")
        }
        return bodies
    }

    /// Decodes `body` as the collector does (each batch through the streaming reader and, for
    /// the general reader, as single messages).
    static func decoded(_ body: String, receivedAt: Int64, streaming: Bool) throws -> [IngestMessage] {
        let decoder = BatchDecoder()
        let request = try Array(body.utf8).withUnsafeBytes { bytes in
            try decoder.decode(bytes, endpoint: .batch, receivedAt: receivedAt, streaming: streaming)
        }
        #expect(request.rejections.isEmpty, "\(request.rejections)")
        return request.messages
    }

    @Test(arguments: StorageKind.available)
    func theDefinitionsAreWhatTheStoredEventsHold(kind: StorageKind) async throws {
        try await withStorage(kind) { storage async throws in
            let base = Timestamp.milliseconds(TestMessages.base)
            var all: [IngestMessage] = []
            for (index, body) in Self.bodies(seed: 7).enumerated() {
                let messages = try Self.decoded(
                    body, receivedAt: base + Int64(index) * 61_000, streaming: index % 2 == 0)
                #expect(messages.allSatisfy { $0.propertyKeys != nil })
                all += messages
                #expect(try await storage.insert(messages, source: "default").allSatisfy { $0 })
            }
            // Messages made in Swift carry no keys: the storage reads them from the payload.
            var made = (0..<20).map { index -> IngestMessage in
                let plan: JSONValue = index % 4 == 0 ? "pro" : 3
                let name = index % 2 == 0 ? "open" : "made"
                let user: String? = index % 3 == 0 ? "u9" : nil
                return TestMessages.ingest(
                    name, id: "made-\(index)", user: user, at: Double(index), properties: ["plan": plan, "made": true])
            }
            made[1].receivedAt = base + 900_000
            #expect(try await storage.insert(made, source: "default").allSatisfy { $0 })
            #expect(try await storage.insert(Array(made.prefix(4)), source: "web") == [true, true, true, true])
            // A resend adds nothing.
            #expect(try await storage.insert(all.shuffled(), source: "default").allSatisfy { !$0 })
            try await Self.expectKept(storage, sources: ["default", "web"])
            let counted = try await Self.counted(storage, source: "default")
            #expect(
                counted.events["twice"] != nil && counted.traits["plan"] != nil && counted.properties["Home"] != nil)
            #expect(counted.properties["open"]?["größe"] != nil && counted.properties["open"]?[""] != nil)

            // A user's data deleted, then retention.
            let deletion = StoredDeletion(
                id: "d1", source: "default", body: "{}", suppressing: false, requestedAt: 0, liftedAt: nil)
            let deleted = try await storage.deleteUserData(
                deletion, userIds: ["u1", "u9"], anonymousIds: ["a3"], suppress: [])
            #expect(deleted.events > 0)
            try await Self.expectKept(storage, sources: ["default", "web"], times: false)
            let minute = (base + 2 * 61_000) / 60_000
            while try await storage.deleteEvents(source: "default", beforeMinute: minute + 1, limit: 25) > 0 {}
            try await Self.expectKept(storage, sources: ["default", "web"], times: false)
            #expect(try await Self.kept(storage, source: "default").events["made"] == nil)

            // PostgreSQL's writes added rows of their own: folded, the same.
            if kind == .postgres {
                try await DefinitionCounts.fold(source: "default", in: storage.backend)
                let rows = try await storage.backend.query(
                    "SELECT COUNT(*), COUNT(DISTINCT (kind, event, property, type)) FROM definitions WHERE source = 'default'",
                    [])
                #expect(rows.first?[0].int == rows.first?[1].int)
                try await Self.expectKept(storage, sources: ["default"], times: false)
            }
        }
    }

    @Test(arguments: StorageKind.available)
    func theEventsStoredBeforeTheUpgradeAreCountedInTheBackground(kind: StorageKind) async throws {
        let base = Timestamp.milliseconds(TestMessages.base)
        let old = try Self.bodies(seed: 3).prefix(3).enumerated().flatMap { index, body in
            try Self.decoded(body, receivedAt: base + Int64(index) * 1000, streaming: true)
        }
        try await OlderSchemas.upgrade(kind, from: 19) { backend in
            try await OlderSchemas.store(old, source: "default", in: backend)
        } opened: { storage in
            let before = try await storage.definitionsBackfill()
            #expect(!before.isComplete && before.last > 0)
            #expect(try await storage.definitions(source: "default", event: nil, limit: 100).complete == false)
            // New events meanwhile, and a deletion of old and new ones before the backfill gets there.
            let new = try Self.bodies(seed: 4).prefix(2).flatMap {
                try Self.decoded($0, receivedAt: base + 10_000, streaming: true)
            }
            _ = try await storage.insert(new, source: "default")
            let deletion = StoredDeletion(
                id: "d1", source: "default", body: "{}", suppressing: false, requestedAt: 0, liftedAt: nil)
            _ = try await storage.deleteUserData(deletion, userIds: ["u2"], anonymousIds: ["a5"], suppress: [])
            var batches = 0
            while !(try await storage.backfillDefinitions(limit: 17).isComplete) { batches += 1 }
            #expect(batches >= old.count / 17 - 1)
            #expect(try await storage.definitions(source: "default", event: nil, limit: 100).complete)
            try await Self.expectKept(storage, sources: ["default"], times: false)
            // Once complete, a batch does nothing.
            #expect(try await storage.backfillDefinitions(limit: 17).isComplete)
            try await Self.expectKept(storage, sources: ["default"], times: false)
        }
    }

    @Test func theStreamingReaderAndTheParserFindTheSameKeys() throws {
        for (index, body) in Self.bodies(seed: 11).enumerated() {
            let receivedAt = Int64(index)
            let streamed = try Self.decoded(body, receivedAt: receivedAt, streaming: true)
            let parsed = try Self.decoded(body, receivedAt: receivedAt, streaming: false)
            #expect(streamed.map(\.propertyKeys) == parsed.map(\.propertyKeys))
            // And what is read back from the payload.
            for message in streamed {
                var bare = message
                bare.propertyKeys = nil
                #expect(PropertyKeyReader.definedKeys(of: bare) == message.propertyKeys)
            }
        }
        let body =
            #"{"batch":[{"type":"track","event":"e","anonymousId":"a","properties":{"b":1,"a":"x","b":null,"pl\u0061n":[]}}]}"#
        let keys = try Self.decoded(body, receivedAt: 0, streaming: true).first?.propertyKeys
        #expect(
            keys == [
                PropertyKey(name: "a", type: .string), PropertyKey(name: "b", type: .null),
                PropertyKey(name: "plan", type: .array),
            ])
    }
}
