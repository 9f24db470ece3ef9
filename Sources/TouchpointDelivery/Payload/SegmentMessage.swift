import TouchpointCore
import TouchpointEvents

/// Writes one recorded event as a message of Segment's HTTP Tracking API.
///
/// ```json
/// {"type":"track","event":"checkout","messageId":"…","timestamp":"2026-01-01T00:00:00.000Z",
///  "userId":"u1","anonymousId":"…","properties":{…},
///  "context":{"sessionId":"…","app":{…},"device":{…},"os":{…},"locale":"en-US","timezone":"Europe/Berlin",
///  "library":{"name":"touchpoint-swift","version":"0.1.0"}}}
/// ```
///
/// Each type in the shape Segment's SDKs (analytics-swift) send it: `identify` carries its
/// properties as `traits` and has no `event`; `screen` carries the screen's name as `name` and a
/// `category` property as `category` beside it (not among the properties); `group` carries its name as `groupId` and its
/// properties as `traits`; `alias` carries its `previousId` property as `previousId` and nothing
/// else; every other type is sent as a `track` of its name. `userId` is present once the user is
/// known, `anonymousId` always: the collector merges the two on `identify` and `alias`.
struct SegmentMessage {
    /// The bytes after the session id: the standard context, the library and the closing braces,
    /// the same for every message.
    let contextTail: [UInt8]

    init(library: DeliveryLibrary, context: DeliveryContext?) {
        var writer = JSONWriter(capacity: 512)
        writer.beginObject()
        context?.write(to: &writer)
        writer.key("library")
        writer.beginObject()
        writer.key("name")
        writer.string(library.name)
        writer.key("version")
        writer.string(library.version)
        writer.endObject()
        writer.endObject()
        // `{…,"library":{…}}` → `…,"library":{…}}}`: continues the context object after `sessionId`
        // (the writer adds the comma) and closes it and the message.
        contextTail = Array(writer.bytes.dropFirst()) + [UInt8(ascii: "}")]
    }

    /// Writes `event`'s message (no separator) into `writer`.
    func write(_ event: Event, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("type")
        var payload: (key: String, value: [String: EventValue])? = ("properties", event.properties)
        switch event.type {
        case .identify:
            writer.string("identify")
            payload = ("traits", event.properties)
        case .screen:
            writer.string("screen")
            writer.key("name")
            writer.string(event.name)
            // analytics-swift sends the category beside the name, not among the properties.
            if let category = event.properties["category"]?.stringValue {
                writer.key("category")
                writer.string(category)
                var properties = event.properties
                properties.removeValue(forKey: "category")
                payload = ("properties", properties)
            }
        case .group:
            writer.string("group")
            writer.key("groupId")
            writer.string(event.name)
            payload = ("traits", event.properties)
        case .alias:
            writer.string("alias")
            if let previousId = event.properties["previousId"]?.stringValue {
                writer.key("previousId")
                writer.string(previousId)
            }
            payload = nil
        default:
            writer.string("track")
            writer.key("event")
            writer.string(event.name)
        }
        writer.key("messageId")
        writer.uuid(event.id)
        writer.key("timestamp")
        writer.timestamp(event.timestamp)
        if let userId = event.userId {
            writer.key("userId")
            writer.string(userId)
        }
        writer.key("anonymousId")
        writer.string(event.anonymousId)
        if let payload {
            writer.key(payload.key)
            writer.object(payload.value)
        }
        writer.key("context")
        writer.beginObject()
        writer.key("sessionId")
        writer.uuid(event.sessionId)
        writer.raw(contextTail)
    }
}
