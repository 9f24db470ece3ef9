import Foundation

/// Why a line of `events.jsonl` is not an event.
public struct EventLineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong, e.g. `missing "sessionId"` or the JSON parser's message.
    public let reason: String

    public init(reason: String) { self.reason = reason }

    public var description: String { reason }
}

extension Event {
    /// Reads an event from one line of `events.jsonl` (without its newline).
    /// - Throws: ``EventLineError`` naming the missing or malformed field, or the JSON error.
    public init(jsonLine bytes: UnsafeBufferPointer<UInt8>) throws(EventLineError) {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            throw EventLineError(reason: error.description)
        }
        try self.init(json: value)
    }

    /// Reads an event from one line of `events.jsonl` (without its newline).
    public init(jsonLine text: String) throws(EventLineError) {
        var text = text
        self = try text.withUTF8 { bytes in Result { () throws(EventLineError) in try Event(jsonLine: bytes) } }.get()
    }

    /// Reads an event from its JSON object form.
    /// - Throws: ``EventLineError`` naming the first missing or malformed field.
    public init(json: JSONValue) throws(EventLineError) {
        guard case .object(let fields) = json else { throw EventLineError(reason: "not a JSON object") }
        func string(_ key: String) throws(EventLineError) -> String {
            guard let value = fields[key] else { throw EventLineError(reason: "missing \"\(key)\"") }
            guard case .string(let text) = value else {
                throw EventLineError(reason: "\"\(key)\" is a \(value.typeName), expected a string")
            }
            return text
        }
        func uuid(_ key: String) throws(EventLineError) -> UUID {
            let text = try string(key)
            guard let id = UUID.parse(text) else { throw EventLineError(reason: "\"\(key)\" is not a UUID") }
            return id
        }
        let id = try uuid("messageId")
        let name = try string("name")
        let stamp = try string("timestamp")
        guard let timestamp = Timestamp.parse(stamp) else {
            throw EventLineError(reason: "\"timestamp\" is not an ISO-8601 timestamp")
        }
        let sessionId = try uuid("sessionId")
        let userId: String?
        switch fields["userId"] {
        case nil, .null?: userId = nil
        case .string(let text)?: userId = text
        case let other?: throw EventLineError(reason: "\"userId\" is a \(other.typeName), expected a string")
        }
        let anonymousId = fields["anonymousId"]?.stringValue ?? ""
        let type = fields["type"]?.stringValue.map(EventType.init(rawValue:)) ?? .track
        let properties: [String: EventValue]
        switch fields["properties"] {
        case nil, .null?: properties = [:]
        case .object(let members)?: properties = members
        case let other?: throw EventLineError(reason: "\"properties\" is a \(other.typeName), expected an object")
        }
        self.init(
            id: id, type: type, name: name, timestamp: timestamp, sessionId: sessionId, userId: userId,
            anonymousId: anonymousId, properties: properties)
    }

    /// The event as one line of `events.jsonl`, newline included.
    public func jsonLine() -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        write(to: &writer)
        writer.newline()
        return writer.bytes
    }

    /// Writes the event's JSON object (no newline).
    ///
    /// Field order is fixed: `messageId`, `type`, `name`, `timestamp`, `sessionId`, `userId`
    /// (omitted when nil), `anonymousId`, `properties`.
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("messageId")
        writer.uuid(id)
        writer.key("type")
        writer.string(type.rawValue)
        writer.key("name")
        writer.string(name)
        writer.key("timestamp")
        writer.timestamp(timestamp)
        writer.sessionMembers(sessionId: sessionId, userId: userId, anonymousId: anonymousId)
        writer.object(properties)
        writer.endObject()
    }
}

extension JSONWriter {
    /// The members of a line that its session decides, up to the `properties` key:
    /// `"sessionId":"…","userId":"…","anonymousId":"…","properties":` (no `userId` when nil). One
    /// place for ``Event/write(to:)`` and the record path's precomputed tail.
    mutating func sessionMembers(sessionId: UUID, userId: String?, anonymousId: String) {
        key("sessionId")
        uuid(sessionId)
        if let userId {
            key("userId")
            string(userId)
        }
        key("anonymousId")
        string(anonymousId)
        key("properties")
    }
}

extension EventSession {
    /// The content of `session.json`.
    public func jsonBytes() -> [UInt8] {
        var members: [String: JSONValue] = [
            "id": .string(id.uuidString),
            "startedAt": .string(Timestamp.format(startedAt)),
        ]
        if let userId { members["userId"] = .string(userId) }
        if let metadata { members["metadata"] = .object(metadata) }
        if let endedAt { members["endedAt"] = .string(Timestamp.format(endedAt)) }
        var writer = JSONWriter(capacity: 160, sortsKeys: true)
        writer.object(members)
        writer.newline()
        return writer.bytes
    }

    /// Reads a session from the content of `session.json`.
    /// - Throws: ``EventLineError`` naming the missing or malformed field.
    public init(jsonBytes bytes: [UInt8]) throws(EventLineError) {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            throw EventLineError(reason: error.description)
        }
        guard case .object(let fields) = value else { throw EventLineError(reason: "not a JSON object") }
        guard let idText = fields["id"]?.stringValue, let id = UUID.parse(idText) else {
            throw EventLineError(reason: "\"id\" is missing or not a UUID")
        }
        guard let started = fields["startedAt"]?.stringValue.flatMap(Timestamp.parse) else {
            throw EventLineError(reason: "\"startedAt\" is missing or not an ISO-8601 timestamp")
        }
        let ended = fields["endedAt"]?.stringValue.flatMap(Timestamp.parse)
        self.init(
            id: id, userId: fields["userId"]?.stringValue, metadata: fields["metadata"]?.objectValue,
            startedAt: started, endedAt: ended)
    }
}
