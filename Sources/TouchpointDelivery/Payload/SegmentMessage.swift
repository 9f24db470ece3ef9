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
/// `identify` events carry their properties as `traits` and have no `event`; `screen` events
/// carry the screen's name as `name`; every other type is sent as a `track` of its name.
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
        switch event.type {
        case .identify:
            writer.string("identify")
        case .screen:
            writer.string("screen")
            writer.key("name")
            writer.string(event.name)
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
        writer.key(event.type == .identify ? "traits" : "properties")
        writer.object(event.properties)
        writer.key("context")
        writer.beginObject()
        writer.key("sessionId")
        writer.uuid(event.sessionId)
        writer.raw(contextTail)
    }
}
