import TouchpointCore

/// One top-level key of a message's `properties` (a `track`, `page` or `screen` call) or `traits`
/// (an `identify` call), with the JSON type of its value: what the collector's definitions count
/// (`GET /v1/query/definitions`).
public struct PropertyKey: Sendable, Hashable {
    /// The key as sent.
    public var name: String
    /// The JSON type of its value.
    public var type: PropertyType

    /// Creates a key.
    public init(name: String, type: PropertyType) {
        self.name = name
        self.type = type
    }
}

/// The JSON type of a property's value.
public enum PropertyType: String, Sendable, Hashable, CaseIterable {
    case string
    case number
    case boolean
    case object
    case array
    case null

    /// The type of the JSON value whose text starts with `byte`.
    init(firstByte byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): self = .string
        case UInt8(ascii: "{"): self = .object
        case UInt8(ascii: "["): self = .array
        case UInt8(ascii: "t"), UInt8(ascii: "f"): self = .boolean
        case UInt8(ascii: "n"): self = .null
        default: self = .number
        }
    }

    /// The type of `value`.
    init(_ value: JSONValue) {
        switch value {
        case .string: self = .string
        case .int, .double: self = .number
        case .bool: self = .boolean
        case .object: self = .object
        case .array: self = .array
        case .null: self = .null
        }
    }
}

/// Reads the top-level keys of an object, and of a message's `properties` or `traits`, straight
/// from JSON bytes, checking them as ``JSONParser`` would.
///
/// A key that occurs twice counts once, with the type of its last value (the value a parser
/// keeps). Ingest reads them on its pass over a batch (``StreamingBatchReader``); deletion,
/// retention and the backfill of the definitions read them from stored payloads.
enum PropertyKeyReader {
    /// The keys of the object whose `{` is next at `cursor` (inside `bytes`, at `depth`), the cursor
    /// moved past it.
    static func keys(of cursor: inout JSONCursor, in bytes: UnsafeBufferPointer<UInt8>, depth: Int)
        throws(JSONParseError) -> [PropertyKey]
    {
        guard cursor.take(UInt8(ascii: "{")) else {
            throw JSONParseError(offset: cursor.offset, reason: "not an object")
        }
        var keys: [PropertyKey] = []
        cursor.skipWhitespace()
        if cursor.take(UInt8(ascii: "}")) { return keys }
        repeat {
            cursor.skipWhitespace()
            let start = cursor.offset
            let name: String
            if let plain = try cursor.readKey() {
                name = String(decoding: plain, as: UTF8.self)
            } else {
                // Escaped: the parser's own reader decodes it (the key was checked above).
                var key = JSONCursor(UnsafeBufferPointer(rebasing: bytes[start...]))
                name = (try key.readValue(depth: depth + 1)).stringValue ?? ""
            }
            guard let next = cursor.next else {
                throw JSONParseError(offset: cursor.offset, reason: "unexpected end of input, expected a value")
            }
            keys.append(PropertyKey(name: name, type: PropertyType(firstByte: next)))
            try cursor.skipValue(depth: depth + 1)
        } while try cursor.endOfMember(close: UInt8(ascii: "}"))
        return unique(keys)
    }

    /// `keys` with each name once, with the type of its last occurrence, sorted by name (so the
    /// order of the members, or of a parser's dictionary, does not matter).
    static func unique(_ keys: [PropertyKey]) -> [PropertyKey] {
        guard keys.count > 1 else { return keys }
        let ordered = keys.enumerated().sorted { ($0.element.name, $0.offset) < ($1.element.name, $1.offset) }
        var unique: [PropertyKey] = []
        unique.reserveCapacity(keys.count)
        for (offset, entry) in ordered.enumerated()
        where offset + 1 == ordered.count || ordered[offset + 1].element.name != entry.element.name {
            unique.append(entry.element)
        }
        return unique
    }

    /// `keys` sorted by name.
    static func sorted(_ keys: [PropertyKey]) -> [PropertyKey] {
        keys.count > 1 ? keys.sorted { $0.name < $1.name } : keys
    }

    /// The keys of the object that fills `bytes`; nil when it is not a JSON object.
    static func keys(ofObject bytes: UnsafeBufferPointer<UInt8>) -> [PropertyKey]? {
        var cursor = JSONCursor(bytes)
        cursor.skipWhitespace()
        guard cursor.next == UInt8(ascii: "{") else { return nil }
        return try? keys(of: &cursor, in: bytes, depth: 0)
    }

    /// The keys of the top-level member `member` of the message object that fills `bytes` (its
    /// last occurrence); nil when the member is absent or not an object, or the bytes are not an
    /// object.
    static func keys(ofMember member: StaticString, in bytes: UnsafeBufferPointer<UInt8>) -> [PropertyKey]? {
        var found: [PropertyKey]?
        let occurrences = walk(member, of: bytes) { (cursor) throws(JSONParseError) in
            found = cursor.next == UInt8(ascii: "{") ? try keys(of: &cursor, in: bytes, depth: 1) : nil
            if found == nil { try cursor.skipValue(depth: 1) }
        }
        return occurrences == nil ? nil : found
    }

    /// Walks the top-level members of the JSON object that fills `bytes`, calling `body` with the
    /// cursor at the value of each occurrence of `member` (`body` moves it past the value) and
    /// skipping the others. The number of occurrences; nil when the bytes are not an object or
    /// not valid JSON (or `body` throws).
    static func walk(
        _ member: StaticString, of bytes: UnsafeBufferPointer<UInt8>,
        _ body: (inout JSONCursor) throws(JSONParseError) -> Void
    ) -> Int? {
        var cursor = JSONCursor(bytes)
        do throws(JSONParseError) {
            cursor.skipWhitespace()
            guard cursor.take(UInt8(ascii: "{")) else { return nil }
            cursor.skipWhitespace()
            if cursor.take(UInt8(ascii: "}")) { return 0 }
            var occurrences = 0
            repeat {
                cursor.skipWhitespace()
                let start = cursor.offset
                let matches: Bool
                if let key = try cursor.readKey() {
                    matches = JSONCursor.key(key, is: member)
                } else {
                    var escaped = JSONCursor(UnsafeBufferPointer(rebasing: bytes[start...]))
                    matches = (try escaped.readValue(depth: 1)).stringValue == member.description
                }
                if matches {
                    occurrences += 1
                    try body(&cursor)
                } else {
                    try cursor.skipValue(depth: 1)
                }
            } while try cursor.endOfMember(close: UInt8(ascii: "}"))
            return occurrences
        } catch {
            return nil
        }
    }

    /// The keys a message's definitions count: its `properties` for a `track`, `page` or `screen`
    /// call with a name, its `traits` for an `identify` call, none for the others.
    static func definedKeys(of message: IngestMessage) -> [PropertyKey] {
        if let keys = message.propertyKeys { return keys }
        guard let member = member(of: message.type, named: message.name != nil) else { return [] }
        var payload = message.payload
        return payload.withUTF8 { keys(ofMember: member, in: $0) } ?? []
    }

    /// The member whose keys a call of `type` has counted (nil: none), `named` when it has an
    /// event name.
    static func member(of type: MessageType, named: Bool) -> StaticString? {
        switch type {
        case .track, .page, .screen: named ? "properties" : nil
        case .identify: "traits"
        case .group, .alias: nil
        }
    }
}
