import TouchpointCore

/// How an event's message is stored: without the members its columns already hold.
///
/// `messageId`, `type`, `event` (or `name`), `userId`, `anonymousId`, `timestamp` (or
/// `originalTimestamp`) and `context.sessionId` are each kept in a column of their own; held in the
/// payload too, they were about a third of a web event's bytes. A member is left out of the stored
/// payload only when it occurs once and is a string that needs no escaping and equals its column,
/// so that putting it back gives exactly the value sent; `lifted` records which were left out. A
/// message read back is the same JSON value as the one received (its members in another order).
///
/// A `track`, `page` or `screen` call's context apart from `page` and `sessionId` (a web SDK's
/// library, locale and user agent, a mobile SDK's app, device and OS) is the same for every event
/// of a visit, and often of every visitor on one browser: SQLite may keep it once, in a row of
/// `contexts` (``SharedContexts``), rather than in each event. ``compact(_:columns:shareContext:unwrapProperties:)``
/// sets those members apart; the writer decides whether they are shared or put back.
enum StoredPayload {
    /// The members left out of a stored payload, as bits of the `lifted` column.
    struct Lifted: OptionSet, Sendable {
        let rawValue: Int64

        static let messageId = Lifted(rawValue: 1)
        static let type = Lifted(rawValue: 2)
        static let event = Lifted(rawValue: 4)
        static let name = Lifted(rawValue: 8)
        static let userId = Lifted(rawValue: 16)
        static let anonymousId = Lifted(rawValue: 32)
        static let timestamp = Lifted(rawValue: 64)
        static let originalTimestamp = Lifted(rawValue: 128)
        /// `context.sessionId`.
        static let sessionId = Lifted(rawValue: 256)
        /// The context's other members but `page`: in the `contexts` row of `context_id`.
        static let context = Lifted(rawValue: 512)
        /// The `original_timestamp` column is NULL: the text is ``derivedOriginalTimestamp(timestamp:sentAt:receivedAt:)``.
        static let derivedTime = Lifted(rawValue: 1024)
        /// The `context` member is left out: an object whose members were all lifted (`sessionId`
        /// and the shared ones), it is `{}` and comes back as the last member.
        static let emptyContext = Lifted(rawValue: 2048)
        /// All that was left of a `track`, `page` or `screen` call was its `properties` object:
        /// the stored payload is that object, and comes back wrapped as `{"properties":…}` (SQLite
        /// only; SQL reads a property through ``SQLDialect/propertyPath(_:)``).
        static let properties = Lifted(rawValue: 4096)
    }

    /// The device time an event's corrected time came from, as `YYYY-MM-DDTHH:MM:SS.sssZ`:
    /// `timestamp − receivedAt + sentAt` (the correction undone), or `timestamp` without `sentAt`.
    /// SQLite keeps no text that this gives back exactly (an SDK's `toISOString()` or its like,
    /// 24 bytes an event); nil outside years 1970 to 9999.
    static func derivedOriginalTimestamp(timestamp: Int64, sentAt: Int64?, receivedAt: Int64) -> String? {
        originalTime(timestamp: timestamp, sentAt: sentAt, receivedAt: receivedAt).map {
            Timestamp.format(Timestamp.date(milliseconds: $0))
        }
    }

    /// The device time in milliseconds (the correction undone), when in years 1970 to 9999.
    private static func originalTime(timestamp: Int64, sentAt: Int64?, receivedAt: Int64) -> Int64? {
        let original = sentAt.map { timestamp &- receivedAt &+ $0 } ?? timestamp
        return original >= 0 && original < latestDerived ? original : nil
    }

    /// 10000-01-01T00:00:00Z in milliseconds: the years of four digits end before it.
    private static let latestDerived: Int64 = 253_402_300_800_000

    /// Whether the message's `originalTimestamp` is the one its corrected time gives back.
    static func derivesOriginalTimestamp(_ message: IngestMessage) -> Bool {
        guard let text = message.originalTimestamp, text.utf8.count == 24 else { return false }
        guard
            let original = originalTime(
                timestamp: message.timestamp, sentAt: message.sentAt, receivedAt: message.receivedAt)
        else { return false }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        Timestamp.append(Timestamp.date(milliseconds: original), to: &bytes)
        return text.utf8.elementsEqual(bytes)
    }

    /// The smallest shared part of a context worth a row of `contexts` (a shorter one stays inline).
    static let minimumSharedContext = 32

    /// The columns a payload's left-out members are put back from.
    struct Columns {
        var messageId: String
        var type: String
        var name: String?
        var userId: String?
        var anonymousId: String?
        var originalTimestamp: String?
        var sessionId: String?

        init(_ message: IngestMessage) {
            messageId = message.messageId
            type = message.type.rawValue
            name = message.name
            userId = message.userId
            anonymousId = message.anonymousId
            originalTimestamp = message.originalTimestamp
            sessionId = message.sessionId
        }

        init(
            messageId: String, type: String, name: String?, userId: String?, anonymousId: String?,
            originalTimestamp: String?, sessionId: String?
        ) {
            self.messageId = messageId
            self.type = type
            self.name = name
            self.userId = userId
            self.anonymousId = anonymousId
            self.originalTimestamp = originalTimestamp
            self.sessionId = sessionId
        }

        /// The column a lifted top-level member is put back from.
        func value(of member: Lifted) -> String? {
            switch member {
            case .messageId: messageId
            case .type: type
            case .event, .name: name
            case .userId: userId
            case .anonymousId: anonymousId
            case .timestamp, .originalTimestamp: originalTimestamp
            case .sessionId: sessionId
            default: nil
            }
        }
    }

    /// The top-level members that may be lifted, with their keys.
    private static let topLevel: [(Lifted, StaticString)] = [
        (.messageId, "messageId"), (.type, "type"), (.event, "event"), (.name, "name"), (.userId, "userId"),
        (.anonymousId, "anonymousId"), (.timestamp, "timestamp"), (.originalTimestamp, "originalTimestamp"),
    ]

    /// The keys of ``topLevel`` and then `context`: the top-level members compacting looks for.
    private static let liftableNames: [StaticString] = topLevel.map(\.1) + ["context"]

    private static let sessionIdName: [StaticString] = ["sessionId"]

    /// A payload as stored: without the members its columns hold (`lifted` says which), and with
    /// the context's shareable members set apart in `sharedContext` (a JSON object) when
    /// `lifted` contains ``Lifted/context``.
    struct Compacted: Equatable {
        var payload: String
        var lifted: Lifted
        var sharedContext: String?

        /// The same message with its shared context members back in `payload` (kept inline).
        var inline: Compacted {
            guard let sharedContext, lifted.contains(.context) else { return self }
            let members = Array(sharedContext.utf8.dropFirst().dropLast())
            return Compacted(
                payload: StoredPayload.inserting(members, intoContextOf: StoredPayload.expanded(payload, lifted)),
                lifted: lifted.subtracting([.context, .emptyContext, .properties]), sharedContext: nil)
        }
    }

    /// `payload` without the members its columns hold, and which those are.
    /// - Parameters:
    ///   - shareContext: whether to set the context's shareable members apart (only a `track`,
    ///     `page` or `screen` call's, when they are distinct plain keys and at least
    ///     ``minimumSharedContext`` bytes).
    ///   - unwrapProperties: whether a `track`, `page` or `screen` call of which only a
    ///     `properties` object is left is stored as that object (``Lifted/properties``).
    static func compact(
        _ payload: String, columns: Columns, shareContext: Bool = false, unwrapProperties: Bool = false
    ) -> Compacted {
        var payload = payload
        return payload.withUTF8 { bytes in
            guard let members = try? Self.members(of: bytes) else {
                return Compacted(payload: String(decoding: bytes, as: UTF8.self), lifted: [])
            }
            var lifted: Lifted = []
            // Per member, whether it is left out (flags, not a set: this runs for every event).
            var dropped = [Bool](repeating: false, count: members.count)
            // Each key's member when the object has exactly one (one pass over the members).
            let found = Self.soleMembers(members, named: liftableNames)
            for (slot, (flag, _)) in topLevel.enumerated() {
                guard let at = found.of(slot), let value = columns.value(of: flag),
                    Self.isPlainString(members[at].value, equalTo: value, in: bytes)
                else { continue }
                // Of `event` and `name`, or `timestamp` and `originalTimestamp`, the one the column was read from.
                if flag == .name, lifted.contains(.event) { continue }
                if flag == .originalTimestamp, lifted.contains(.timestamp) { continue }
                lifted.insert(flag)
                dropped[at] = true
            }
            var context: [UInt8]?
            var shared: String?
            let contextAt = found.of(topLevel.count)
            if let contextAt {
                let range = members[contextAt].value
                let inner = UnsafeBufferPointer(rebasing: bytes[range])
                if let contextMembers = try? Self.members(of: inner) {
                    var omitted = [Bool](repeating: false, count: contextMembers.count)
                    if let sessionId = columns.sessionId,
                        let sessionAt = Self.soleMembers(contextMembers, named: sessionIdName).of(0),
                        Self.isPlainString(contextMembers[sessionAt].value, equalTo: sessionId, in: inner)
                    {
                        lifted.insert(.sessionId)
                        omitted[sessionAt] = true
                    }
                    if shareContext, Self.sharesContext(columns.type),
                        let apart = Self.shareable(contextMembers, of: inner)
                    {
                        let body = Self.object(contextMembers, of: inner, without: apart.map { !$0 })
                        lifted.insert(.context)
                        for index in apart.indices where apart[index] { omitted[index] = true }
                        shared = String(decoding: body, as: UTF8.self)
                    }
                    if omitted.contains(true) {
                        context = Self.object(contextMembers, of: inner, without: omitted)
                    }
                }
            }
            guard !lifted.isEmpty else { return Compacted(payload: String(decoding: bytes, as: UTF8.self), lifted: []) }
            // A context left empty is not kept at all (13 bytes of an event of the Touchpoint SDK's,
            // whose context is its session id and what it shares); not when an escaped key could
            // be another `context`, whose order to it would then matter.
            if let remaining = context, let contextAt, remaining == Self.emptyObject,
                members.allSatisfy({ $0.key.baseAddress != nil })
            {
                lifted.insert(.emptyContext)
                dropped[contextAt] = true
                context = nil
            }
            // What is left only a `properties` object: that object alone (15 bytes an event, where
            // an SDK's context is all lifted or shared). Every other member was dropped, so no
            // escaped key is among the members (those are never dropped).
            if unwrapProperties, context == nil, dropped.count(where: { !$0 }) == 1, Self.sharesContext(columns.type),
                let kept = dropped.firstIndex(of: false),
                JSONCursor.key(members[kept].key, is: "properties"),
                bytes[members[kept].value.lowerBound] == UInt8(ascii: "{")
            {
                lifted.insert(.properties)
                let value = UnsafeBufferPointer(rebasing: bytes[members[kept].value])
                return Compacted(payload: String(decoding: value, as: UTF8.self), lifted: lifted, sharedContext: shared)
            }
            let replacing = context.flatMap { value in contextAt.map { (index: $0, value: value) } }
            let object = Self.object(members, of: bytes, without: dropped, replacing: replacing)
            return Compacted(payload: String(decoding: object, as: UTF8.self), lifted: lifted, sharedContext: shared)
        }
    }

    /// Whether calls of `type` may share their context: not `identify`, `group` or `alias`,
    /// whose payloads the people pages read and search as stored.
    private static func sharesContext(_ type: String) -> Bool {
        type == "track" || type == "page" || type == "screen"
    }

    /// The context members to share (all but `sessionId` and `page`), or nil when there are none
    /// worth a row or the keys are not all distinct and plain (then the members' order could
    /// matter to a reader, and putting them back elsewhere could change the value).
    private static func shareable(_ members: [Member], of bytes: UnsafeBufferPointer<UInt8>) -> [Bool]? {
        guard members.count <= 64 else { return nil }
        var apart = [Bool](repeating: false, count: members.count)
        var size = 0
        for (index, member) in members.enumerated() {
            guard member.key.baseAddress != nil else { return nil }
            for earlier in members[..<index] where earlier.key.elementsEqual(member.key) { return nil }
            if JSONCursor.key(member.key, is: "sessionId") || JSONCursor.key(member.key, is: "page") { continue }
            apart[index] = true
            size += member.value.upperBound - member.start + 1
        }
        return size >= minimumSharedContext ? apart : nil
    }

    /// The message as received (the same JSON value) from a stored payload and its columns.
    /// - Parameter sharedContext: the `contexts` row's object, when `lifted` contains ``Lifted/context``.
    static func restore(_ payload: String, lifted: Lifted, columns: Columns, sharedContext: String? = nil) -> String {
        guard !lifted.isEmpty else { return payload }
        var body = expanded(payload, lifted)
        var contextMembers: [UInt8] = []
        if lifted.contains(.sessionId), let sessionId = columns.sessionId {
            var writer = JSONWriter(capacity: sessionId.utf8.count + 16)
            writer.beginObject()
            writer.key("sessionId")
            writer.string(sessionId)
            writer.endObject()
            contextMembers += writer.bytes.dropFirst().dropLast()  // "sessionId":"…"
        }
        if lifted.contains(.context), let sharedContext, sharedContext.utf8.count > 2 {
            if !contextMembers.isEmpty { contextMembers.append(UInt8(ascii: ",")) }
            contextMembers += sharedContext.utf8.dropFirst().dropLast()
        }
        if !contextMembers.isEmpty { body = Self.inserting(contextMembers, intoContextOf: body) }
        var writer = JSONWriter(capacity: body.utf8.count + 256)
        writer.beginObject()
        for (flag, key) in topLevel where lifted.contains(flag) {
            guard let value = columns.value(of: flag) else { continue }
            writer.key("\(key)")
            writer.string(value)
        }
        writer.endObject()
        var head = writer.bytes
        head.removeLast()  // the closing brace: the stored members follow
        let rest = body.utf8.dropFirst()  // after the stored object's opening brace
        if rest.first != UInt8(ascii: "}"), head.count > 1 { head.append(UInt8(ascii: ",")) }
        return String(decoding: head + rest, as: UTF8.self)
    }

    // MARK: Reading members

    private struct Member {
        /// Where the member's key starts.
        var start: Int
        var key: UnsafeBufferPointer<UInt8>
        var value: Range<Int>
    }

    /// The members of the object that fills `bytes`, in order.
    ///
    /// Every payload here is JSON that was checked when it arrived (or written by the collector),
    /// so its values are skipped by their structure alone — quotes, escapes and brackets — not
    /// checked again (that was most of the time compacting took). Bytes that are not an object
    /// throw; no input reads out of bounds.
    private static func members(of bytes: UnsafeBufferPointer<UInt8>) throws(JSONParseError) -> [Member] {
        var scan = StructuralJSONScanner(bytes: bytes)
        func failure(_ reason: String) -> JSONParseError { JSONParseError(offset: scan.index, reason: reason) }
        scan.skipWhitespace()
        guard scan.take(UInt8(ascii: "{")) else { throw failure("not an object") }
        var members: [Member] = []
        members.reserveCapacity(16)
        scan.skipWhitespace()
        if scan.take(UInt8(ascii: "}")) { return members }
        while true {
            scan.skipWhitespace()
            let start = scan.index
            guard scan.skipString() else { throw failure("expected a key") }
            // A key with an escape is never one to lift; it is kept as it is.
            let key =
                scan.lastStringWasPlain
                ? UnsafeBufferPointer(rebasing: bytes[(start + 1)..<(scan.index - 1)])
                : UnsafeBufferPointer(start: nil, count: 0)
            scan.skipWhitespace()
            guard scan.take(UInt8(ascii: ":")) else { throw failure("expected ':'") }
            scan.skipWhitespace()
            let valueStart = scan.index
            guard scan.skipValue() else { throw failure("expected a value") }
            members.append(Member(start: start, key: key, value: valueStart..<scan.index))
            scan.skipWhitespace()
            if scan.take(UInt8(ascii: ",")) { continue }
            if scan.take(UInt8(ascii: "}")) { return members }
            throw failure("expected ',' or '}'")
        }
    }

    /// Per name of `names`, the place of its member in `members` when exactly one member has that
    /// key (a key with an escape matches none).
    private static func soleMembers(_ members: [Member], named names: [StaticString]) -> SoleMembers {
        // Places as integers, not optionals: an array of optionals looked up its type's metadata
        // at run time, for every event.
        var found = SoleMembers(places: [Int](repeating: SoleMembers.none, count: names.count))
        for (index, member) in members.enumerated() {
            let count = member.key.count
            for (slot, name) in names.enumerated()
            where name.utf8CodeUnitCount == count && JSONCursor.key(member.key, is: name) {
                found.places[slot] = found.places[slot] == SoleMembers.none ? index : SoleMembers.repeated
            }
        }
        return found
    }

    /// Where the members of some keys are (``soleMembers(_:named:)``).
    private struct SoleMembers {
        static let none = -1
        static let repeated = -2
        var places: [Int]

        /// The place of the one member of the `slot`th key, or nil when there is none or more than one.
        func of(_ slot: Int) -> Int? { places[slot] >= 0 ? places[slot] : nil }
    }

    /// Whether the value at `range` is a JSON string with no escape equal to `text`.
    private static func isPlainString(_ range: Range<Int>, equalTo text: String, in bytes: UnsafeBufferPointer<UInt8>)
        -> Bool
    {
        let plain = text.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            guard range.count == utf8.count + 2, bytes[range.lowerBound] == UInt8(ascii: "\"") else { return false }
            let start = range.lowerBound + 1
            for offset in utf8.indices {
                let byte = utf8[offset]
                // A quote, backslash or control character would have been escaped: not a plain string.
                guard byte == bytes[start + offset], byte != UInt8(ascii: "\\"), byte != UInt8(ascii: "\""),
                    byte >= 0x20
                else { return false }
            }
            return true
        }
        if let plain { return plain }
        // Not contiguous UTF-8 (a bridged string): through a copy.
        var copy = text
        copy.makeContiguousUTF8()
        return isPlainString(range, equalTo: copy, in: bytes)
    }

    /// The object of `members` (in `bytes`) without the members `dropped` flags, and with the value
    /// of the member at `replacing.index` replaced, as bytes (built once, on the request's task).
    private static func object(
        _ members: [Member], of bytes: UnsafeBufferPointer<UInt8>, without dropped: [Bool],
        replacing: (index: Int, value: [UInt8])? = nil
    ) -> [UInt8] {
        var object: [UInt8] = [UInt8(ascii: "{")]
        object.reserveCapacity(bytes.count)
        for (index, member) in members.enumerated() where !dropped[index] {
            if object.count > 1 { object.append(UInt8(ascii: ",")) }
            if let replacing, replacing.index == index {
                object += bytes[member.start..<member.value.lowerBound]
                object += replacing.value
            } else {
                object += bytes[member.start..<member.value.upperBound]
            }
        }
        object.append(UInt8(ascii: "}"))
        return object
    }

    private static let emptyObject: [UInt8] = [UInt8(ascii: "{"), UInt8(ascii: "}")]

    /// A stored payload with what ``compact(_:columns:shareContext:unwrapProperties:)`` took out
    /// of its shape put back: the `{"properties":…}` around it and an empty `context` member.
    static func expanded(_ payload: String, _ lifted: Lifted) -> String {
        let object = lifted.contains(.properties) ? #"{"properties":"# + payload + "}" : payload
        return withContext(object, lifted)
    }

    /// A stored payload (an object as ``compact(_:columns:shareContext:unwrapProperties:)`` writes
    /// it, no whitespace) with its `context` member back, `{}`, when `lifted` says it was left out.
    private static func withContext(_ payload: String, _ lifted: Lifted) -> String {
        guard lifted.contains(.emptyContext), payload.utf8.last == UInt8(ascii: "}") else { return payload }
        let head = payload.utf8.dropLast()
        let separator = head.count > 1 ? "," : ""
        return String(decoding: head, as: UTF8.self) + separator + #""context":{}}"#
    }

    /// `payload` with `members` (JSON members, comma-separated) put first into its `context` object.
    static func inserting(_ members: [UInt8], intoContextOf payload: String) -> String {
        var payload = payload
        return payload.withUTF8 { bytes in
            guard let found = try? Self.members(of: bytes),
                let context = found.first(where: { JSONCursor.key($0.key, is: "context") }),
                bytes[context.value.lowerBound] == UInt8(ascii: "{")
            else { return String(decoding: bytes, as: UTF8.self) }
            var member = members
            var after = context.value.lowerBound + 1
            while after < context.value.upperBound, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[after]) { after += 1 }
            if bytes[after] != UInt8(ascii: "}") { member.append(UInt8(ascii: ",")) }
            let head = bytes[..<(context.value.lowerBound + 1)]
            let tail = bytes[(context.value.lowerBound + 1)...]
            return String(decoding: Array(head) + member + Array(tail), as: UTF8.self)
        }
    }
}
