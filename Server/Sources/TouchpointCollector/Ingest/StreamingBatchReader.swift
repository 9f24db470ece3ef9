import TouchpointCore

/// Reads a `/v1/batch` body in one pass over its bytes, lifting out only the members the collector
/// stores (``MessageFields``) and checking the rest without building it.
///
/// A message's `properties`, `traits` and `context` are most of its bytes; building them into
/// ``JSONValue`` dictionaries cost more than all the rest of decoding (BENCHMARKS.md). The cursor
/// checks them exactly as ``JSONParser`` would, so a body this reader finishes is one the parser
/// accepts. Anything out of the ordinary answers nil and the caller reads the body the general way,
/// which then also words any error: invalid JSON, a body or element that is not an object, a
/// missing or non-array `batch` (or two of them), too many events, an escaped member name, or an
/// element carrying a `writeKey` (its payload must be written out without it).
struct StreamingBatchReader {
    /// One element of `batch`: its members of interest and where its bytes lie in the body.
    struct Element {
        var fields: MessageFields
        var range: Range<Int>
    }

    /// The body's top-level members of interest and its elements.
    struct Body {
        var writeKey: JSONValue?
        var sentAt: JSONValue?
        var context: JSONValue?
        var elements: [Element]
    }

    /// The most elements to read before leaving the body to the general reader.
    let maximumElements: Int

    /// Reads `bytes`, or answers nil (see the type's summary).
    func read(_ bytes: UnsafeBufferPointer<UInt8>) -> Body? {
        var cursor = JSONCursor(bytes)
        do {
            return try readBody(&cursor, bytes)
        } catch {
            return nil
        }
    }

    private func readBody(_ cursor: inout JSONCursor, _ bytes: UnsafeBufferPointer<UInt8>) throws(JSONParseError)
        -> Body?
    {
        var writeKey: JSONValue?
        var sentAt: JSONValue?
        var context: JSONValue?
        var elements: [Element]?
        cursor.skipWhitespace()
        guard cursor.take(UInt8(ascii: "{")) else { return nil }
        cursor.skipWhitespace()
        if !cursor.take(UInt8(ascii: "}")) {
            repeat {
                guard let key = try cursor.readKey() else { return nil }
                if JSONCursor.key(key, is: "batch") {
                    guard elements == nil, let read = try readElements(&cursor, bytes) else { return nil }
                    elements = read
                } else if JSONCursor.key(key, is: "writeKey") {
                    writeKey = try cursor.readValue(depth: 1)
                } else if JSONCursor.key(key, is: "sentAt") {
                    sentAt = try cursor.readValue(depth: 1)
                } else if JSONCursor.key(key, is: "context") {
                    context = try cursor.readValue(depth: 1)
                } else {
                    try cursor.skipValue(depth: 1)
                }
            } while try cursor.endOfMember(close: UInt8(ascii: "}"))
        }
        cursor.skipWhitespace()
        guard cursor.isAtEnd, let elements else { return nil }
        return Body(writeKey: writeKey, sentAt: sentAt, context: context, elements: elements)
    }

    /// The elements of the `batch` array at the cursor (depth 2; each message is at depth 3).
    private func readElements(_ cursor: inout JSONCursor, _ bytes: UnsafeBufferPointer<UInt8>)
        throws(JSONParseError) -> [Element]?
    {
        guard cursor.take(UInt8(ascii: "[")) else { return nil }
        var elements: [Element] = []
        cursor.skipWhitespace()
        if cursor.take(UInt8(ascii: "]")) { return elements }
        repeat {
            cursor.skipWhitespace()
            let start = cursor.offset
            guard elements.count < maximumElements, cursor.take(UInt8(ascii: "{")),
                let fields = try readMessage(&cursor, bytes)
            else { return nil }
            elements.append(Element(fields: fields, range: start..<cursor.offset))
        } while try cursor.endOfMember(close: UInt8(ascii: "]"))
        return elements
    }

    /// The members of the message whose `{` was just read.
    private func readMessage(_ cursor: inout JSONCursor, _ bytes: UnsafeBufferPointer<UInt8>)
        throws(JSONParseError) -> MessageFields?
    {
        let depth = 3
        var fields = MessageFields()
        cursor.skipWhitespace()
        if cursor.take(UInt8(ascii: "}")) { return fields }
        repeat {
            guard let key = try cursor.readKey() else { return nil }
            switch key.count {
            case 4 where JSONCursor.key(key, is: "type"): fields.type = try cursor.readValue(depth: depth)
            case 4 where JSONCursor.key(key, is: "name"): fields.name = try cursor.readValue(depth: depth)
            case 5 where JSONCursor.key(key, is: "event"): fields.event = try cursor.readValue(depth: depth)
            case 6 where JSONCursor.key(key, is: "userId"): fields.userId = try cursor.readValue(depth: depth)
            case 6 where JSONCursor.key(key, is: "sentAt"): fields.sentAt = try cursor.readValue(depth: depth)
            case 6 where JSONCursor.key(key, is: "traits"):
                (fields.traitKeys, fields.traitsTypeProblem) = try objectKeys(&cursor, bytes, depth: depth)
            case 7 where JSONCursor.key(key, is: "context"):
                guard try readContext(&cursor, into: &fields, depth: depth) else { return nil }
            case 8 where JSONCursor.key(key, is: "writeKey"):
                return nil
            case 9 where JSONCursor.key(key, is: "messageId"): fields.messageId = try cursor.readValue(depth: depth)
            case 9 where JSONCursor.key(key, is: "timestamp"): fields.timestamp = try cursor.readValue(depth: depth)
            case 10 where JSONCursor.key(key, is: "properties"):
                (fields.propertyKeys, fields.propertiesTypeProblem) = try objectKeys(&cursor, bytes, depth: depth)
            case 11 where JSONCursor.key(key, is: "anonymousId"):
                fields.anonymousId = try cursor.readValue(depth: depth)
            case 17 where JSONCursor.key(key, is: "originalTimestamp"):
                fields.originalTimestamp = try cursor.readValue(depth: depth)
            case 12 where JSONCursor.key(key, is: "integrations"):
                fields.integrationsTypeProblem = try objectTypeProblem(&cursor, depth: depth)
            default:
                try cursor.skipValue(depth: depth)
            }
        } while try cursor.endOfMember(close: UInt8(ascii: "}"))
        return fields
    }

    /// Moves past a member that must be an object or null: the keys of an object
    /// (``PropertyKeyReader``), or the type of anything but null.
    private func objectKeys(_ cursor: inout JSONCursor, _ bytes: UnsafeBufferPointer<UInt8>, depth: Int)
        throws(JSONParseError)
        -> ([PropertyKey]?, String?)
    {
        guard cursor.next == UInt8(ascii: "{") else { return (nil, try objectTypeProblem(&cursor, depth: depth)) }
        return (try PropertyKeyReader.keys(of: &cursor, in: bytes, depth: depth), nil)
    }

    /// Moves past a member that must be an object or null, answering the type of anything else.
    private func objectTypeProblem(_ cursor: inout JSONCursor, depth: Int) throws(JSONParseError) -> String? {
        if cursor.next == UInt8(ascii: "{") {
            try cursor.skipValue(depth: depth)
            return nil
        }
        return MessageFields.objectTypeProblem(try cursor.readValue(depth: depth))
    }

    /// Reads `context`, keeping its `sessionId`. Answers false for an escaped member name.
    private func readContext(_ cursor: inout JSONCursor, into fields: inout MessageFields, depth: Int)
        throws(JSONParseError) -> Bool
    {
        fields.contextSessionId = nil
        fields.contextTypeProblem = nil
        guard cursor.take(UInt8(ascii: "{")) else {
            fields.contextTypeProblem = MessageFields.objectTypeProblem(try cursor.readValue(depth: depth))
            return true
        }
        cursor.skipWhitespace()
        if cursor.take(UInt8(ascii: "}")) { return true }
        repeat {
            guard let key = try cursor.readKey() else { return false }
            if JSONCursor.key(key, is: "sessionId") {
                fields.contextSessionId = try cursor.readValue(depth: depth + 1)
            } else {
                try cursor.skipValue(depth: depth + 1)
            }
        } while try cursor.endOfMember(close: UInt8(ascii: "}"))
        return true
    }
}
