import Foundation
import TouchpointCore

/// Checks one Segment message and lifts out the fields the collector stores.
struct MessageReader {
    /// The longest `messageId`, `userId`, `anonymousId` or session id accepted, in UTF-8 bytes.
    static let maximumIdentifierBytes = 256

    let limits: IngestLimits
    let sentAt: Int64?
    let receivedAt: Int64
    private var writer = JSONWriter(capacity: 1024)

    init(limits: IngestLimits, sentAt: Int64?, receivedAt: Int64) {
        self.limits = limits
        self.sentAt = sentAt
        self.receivedAt = receivedAt
    }

    /// A problem at a member of the message (`keys` below it), or at the batch's own context.
    private struct FieldError: Error {
        var keys: [String]
        var message: String
        var inBatchContext = false

        init(_ keys: String..., message: String) {
            self.keys = keys
            self.message = message
        }

        init(keys: [String], message: String) {
            self.keys = keys
            self.message = message
        }
    }

    /// Reads `value` found at `path`.
    /// - Parameters:
    ///   - raw: the bytes the value was parsed from, stored as the payload; nil to write the value out.
    ///   - type: the endpoint's type for single-message endpoints; nil in a batch, where `type` is required.
    ///   - batchContext: the batch's top-level `context`, consulted for `sessionId`.
    mutating func read(
        _ value: JSONValue, raw: UnsafeRawBufferPointer?, at path: JSONPath, type endpointType: MessageType?,
        batchContext: [String: JSONValue]?
    ) -> Result<IngestMessage, JSONProblem> {
        guard case .object(var members) = value else {
            return .failure(JSONProblem(path: path, message: "expected an object, found \(value.typeName)"))
        }
        // The write key is a credential: never kept with an event, whichever endpoint carried it.
        var raw = raw
        if members.removeValue(forKey: "writeKey") != nil { raw = nil }
        if let raw {
            return read(MessageFields(members), raw: raw, at: path, type: endpointType, batchContext: batchContext)
        }
        writer.reset()
        writer.object(members)
        let written = writer.bytes
        return written.withUnsafeBytes { buffer in
            read(MessageFields(members), raw: buffer, at: path, type: endpointType, batchContext: batchContext)
        }
    }

    /// Reads a message from its members' `fields` and its bytes as received (`raw`, the payload;
    /// without a `writeKey` member).
    func read(
        _ fields: MessageFields, raw: UnsafeRawBufferPointer, at path: JSONPath, type endpointType: MessageType?,
        batchContext: [String: JSONValue]?
    ) -> Result<IngestMessage, JSONProblem> {
        guard raw.count <= limits.maximumEventBytes else {
            return .failure(
                JSONProblem(
                    path: path,
                    message: "\(raw.count) bytes, over the limit of \(limits.maximumEventBytes) bytes per event"))
        }
        // PostgreSQL cannot store U+0000 in text or JSON, and SQLite would hand it back to queries
        // that then fail: refused here, per event, the same on both databases.
        if Self.containsEscapedNUL(raw) {
            return .failure(
                JSONProblem(
                    path: Self.pathOfNUL(raw, under: path), message: "contains U+0000 (NUL), which is not accepted"))
        }
        do {
            var message = try message(fields, type: endpointType, batchContext: batchContext)
            message.payload = String(decoding: raw, as: UTF8.self)
            return .success(message)
        } catch {
            var problemPath = error.inBatchContext ? JSONPath.root : path
            for key in error.keys { problemPath = problemPath.appending(key) }
            return .failure(JSONProblem(path: problemPath, message: error.message))
        }
    }

    private func message(
        _ members: MessageFields, type endpointType: MessageType?, batchContext: [String: JSONValue]?
    )
        throws(FieldError) -> IngestMessage
    {
        let type: MessageType
        if let endpointType {
            type = endpointType
        } else {
            type = try Self.type(members.type)
        }
        // Segment assigns an id to a message without one; so does the collector, and says so in
        // its answer, since such a message cannot be deduplicated.
        let sentMessageId = try Self.identifier(members.messageId, "messageId")
        let messageId = sentMessageId ?? Self.generatedMessageId()
        let userId = try Self.identifier(members.userId, "userId")
        let anonymousId = try Self.identifier(members.anonymousId, "anonymousId")
        guard userId != nil || anonymousId != nil else {
            throw FieldError(message: "needs a userId or an anonymousId")
        }
        let name: String?
        switch type {
        case .track:
            guard let event = try Self.text(members.event, "event") else {
                throw FieldError("event", message: "missing")
            }
            name = try Self.bounded(event, "event")
        case .page, .screen:
            name = try Self.text(members.name, "name").map { name throws(FieldError) in try Self.bounded(name, "name") }
        case .identify, .group, .alias:
            name = nil
        }
        if let (key, typeName) = members.firstObjectTypeProblem {
            throw FieldError(key, message: "expected an object, found \(typeName)")
        }
        var sessionId = try Self.identifier(members.contextSessionId, "context", "sessionId")
        if sessionId == nil, let batchContext {
            do throws(FieldError) {
                sessionId = try Self.identifier(batchContext["sessionId"], "context", "sessionId")
            } catch {
                var inContext = error
                inContext.inBatchContext = true
                throw inContext
            }
        }
        // The event's time: `timestamp`, else the device time `originalTimestamp` (which the
        // correction below turns into server time with `sentAt`, as Segment does).
        var timeKey = "timestamp"
        var originalTimestamp = try Self.text(members.timestamp, "timestamp")
        if originalTimestamp == nil {
            timeKey = "originalTimestamp"
            originalTimestamp = try Self.text(members.originalTimestamp, "originalTimestamp")
        }
        var eventTime: Int64?
        if let originalTimestamp {
            guard let date = Timestamp.parse(originalTimestamp) else {
                throw FieldError(timeKey, message: "not an ISO-8601 timestamp: \"\(originalTimestamp)\"")
            }
            eventTime = Timestamp.milliseconds(date)
        }
        // A message's own sentAt (used when the request has none) is held to the same rule as its
        // timestamp: unreadable, the event is rejected and named, not silently left uncorrected.
        var messageSentAt: Int64?
        if let text = try Self.text(members.sentAt, "sentAt") {
            guard let date = Timestamp.parse(text) else {
                throw FieldError("sentAt", message: "not an ISO-8601 timestamp: \"\(text)\"")
            }
            messageSentAt = Timestamp.milliseconds(date)
        }
        let sent = sentAt ?? messageSentAt
        return IngestMessage(
            messageId: messageId, type: type, name: name, userId: userId, anonymousId: anonymousId,
            sessionId: sessionId,
            timestamp: TimestampCorrection.corrected(timestamp: eventTime, sentAt: sent, receivedAt: receivedAt),
            originalTimestamp: originalTimestamp, sentAt: sent, receivedAt: receivedAt, payload: "",
            isMessageIdGenerated: sentMessageId == nil, propertyKeys: Self.definedKeys(members, type: type, name: name))
    }

    /// The keys the definitions count (``PropertyKeyReader/definedKeys(of:)``), from the fields.
    private static func definedKeys(_ fields: MessageFields, type: MessageType, name: String?) -> [PropertyKey] {
        switch PropertyKeyReader.member(of: type, named: name != nil)?.description {
        case "properties"?: fields.propertyKeys ?? []
        case "traits"?: fields.traitKeys ?? []
        default: []
        }
    }

    /// Whether the JSON text `raw` has the escape `\u0000` in a string (a raw NUL byte is not valid
    /// JSON and never gets this far). Each backslash starts an escape, so `\\u0000` (a backslash
    /// and the text `u0000`) is not one.
    static func containsEscapedNUL(_ raw: UnsafeRawBufferPointer) -> Bool {
        guard let base = raw.baseAddress else { return false }
        var offset = 0
        while offset < raw.count, let found = memchr(base + offset, 0x5C, raw.count - offset) {
            let index = base.distance(to: UnsafeRawPointer(found))
            if index + 5 < raw.count, raw[index + 1] == UInt8(ascii: "u"),
                raw[(index + 2)...(index + 5)].allSatisfy({ $0 == UInt8(ascii: "0") })
            {
                return true
            }
            offset = index + 2
        }
        return false
    }

    /// Where in the message the first string (a member name or a value) with U+0000 is, for the
    /// rejection; the message's own path when it cannot be parsed.
    static func pathOfNUL(_ raw: UnsafeRawBufferPointer, under path: JSONPath) -> JSONPath {
        guard let value = try? JSONParser.parse(raw) else { return path }
        func find(_ value: JSONValue, _ path: JSONPath) -> JSONPath? {
            switch value {
            case .string(let text): return text.unicodeScalars.contains("\0") ? path : nil
            case .array(let elements):
                for (index, element) in elements.enumerated() {
                    if let found = find(element, path.appending(index: index)) { return found }
                }
                return nil
            case .object(let members):
                for key in members.keys.sorted() {
                    let child = path.appending(key)
                    if key.unicodeScalars.contains("\0") { return child }
                    if let member = members[key], let found = find(member, child) { return found }
                }
                return nil
            default: return nil
            }
        }
        return find(value, path) ?? path
    }

    /// An id for a message sent without one: `generated-` and a random UUID, so it never collides
    /// with a client's and reads as what it is.
    static func generatedMessageId() -> String {
        "generated-" + UUID().uuidString.lowercased()
    }

    private static func type(_ value: JSONValue?) throws(FieldError) -> MessageType {
        guard let text = try text(value, "type") else { throw FieldError("type", message: "missing") }
        guard let type = MessageType(rawValue: text) else {
            let known = MessageType.allCases.map(\.rawValue).joined(separator: ", ")
            throw FieldError("type", message: "unknown type \"\(text)\"; expected one of \(known)")
        }
        return type
    }

    /// The most bytes an event's or a screen's name may have: the insights key on names (a day's
    /// people, an index entry per event), and the query API asks for at most this many.
    static let maximumNameBytes = 200

    private static func bounded(_ name: String, _ key: String) throws(FieldError) -> String {
        guard name.utf8.count <= maximumNameBytes else {
            throw FieldError(key, message: "longer than \(maximumNameBytes) bytes (\(name.utf8.count))")
        }
        return name
    }

    /// A non-empty string, or nil when absent or null.
    private static func text(_ value: JSONValue?, _ keys: String...) throws(FieldError) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)?:
            guard !text.isEmpty else { throw FieldError(keys: keys, message: "empty") }
            return text
        case let other?:
            throw FieldError(keys: keys, message: "expected a string or an integer, found \(other.typeName)")
        }
    }

    /// An id: a non-empty string or an integer (written as text), at most 256 bytes.
    private static func identifier(_ value: JSONValue?, _ keys: String...) throws(FieldError) -> String? {
        let id: String?
        switch value {
        case nil, .null?: id = nil
        case .int(let number)?: id = String(number)
        case .string(let text)?:
            guard !text.isEmpty else { throw FieldError(keys: keys, message: "empty") }
            id = text
        case let other?:
            throw FieldError(keys: keys, message: "expected a string or an integer, found \(other.typeName)")
        }
        if let id, id.utf8.count > maximumIdentifierBytes {
            throw FieldError(keys: keys, message: "longer than \(maximumIdentifierBytes) bytes")
        }
        return id
    }
}

/// The members of one message the collector looks at, as sent (of a repeated member, the last).
///
/// Filled from a parsed object, or by ``StreamingBatchReader`` straight from the bytes without
/// building the rest of the message; ``MessageReader`` checks them the same way either way.
struct MessageFields {
    var type: JSONValue?
    var messageId: JSONValue?
    var userId: JSONValue?
    var anonymousId: JSONValue?
    var event: JSONValue?
    var name: JSONValue?
    var timestamp: JSONValue?
    /// RudderStack's SDKs send the device time as `originalTimestamp` and no `timestamp`.
    var originalTimestamp: JSONValue?
    var sentAt: JSONValue?
    /// `context.sessionId`.
    var contextSessionId: JSONValue?
    // For the members that must be objects when present: the JSON type of the value when it is
    // neither an object nor null.
    var propertiesTypeProblem: String?
    var traitsTypeProblem: String?
    /// The keys of `properties` and `traits` when they are objects (``PropertyKey``).
    var propertyKeys: [PropertyKey]?
    var traitKeys: [PropertyKey]?
    var contextTypeProblem: String?
    var integrationsTypeProblem: String?

    /// The first member (in the order checked) that should be an object and is not, with its type.
    var firstObjectTypeProblem: (String, String)? {
        if let typeName = propertiesTypeProblem { return ("properties", typeName) }
        if let typeName = traitsTypeProblem { return ("traits", typeName) }
        if let typeName = contextTypeProblem { return ("context", typeName) }
        if let typeName = integrationsTypeProblem { return ("integrations", typeName) }
        return nil
    }

    init() {}

    init(_ members: [String: JSONValue]) {
        type = members["type"]
        messageId = members["messageId"]
        userId = members["userId"]
        anonymousId = members["anonymousId"]
        event = members["event"]
        name = members["name"]
        timestamp = members["timestamp"]
        originalTimestamp = members["originalTimestamp"]
        sentAt = members["sentAt"]
        contextSessionId = members["context"]?["sessionId"]
        propertiesTypeProblem = Self.objectTypeProblem(members["properties"])
        traitsTypeProblem = Self.objectTypeProblem(members["traits"])
        propertyKeys = Self.keys(members["properties"])
        traitKeys = Self.keys(members["traits"])
        contextTypeProblem = Self.objectTypeProblem(members["context"])
        integrationsTypeProblem = Self.objectTypeProblem(members["integrations"])
    }

    /// The keys of `value` when it is an object.
    static func keys(_ value: JSONValue?) -> [PropertyKey]? {
        guard case .object(let members)? = value else { return nil }
        return PropertyKeyReader.sorted(members.map { PropertyKey(name: $0.key, type: PropertyType($0.value)) })
    }

    /// The type name of `value` when it is present and neither an object nor null.
    static func objectTypeProblem(_ value: JSONValue?) -> String? {
        switch value {
        case nil, .null?, .object?: return nil
        case let other?: return other.typeName
        }
    }
}
