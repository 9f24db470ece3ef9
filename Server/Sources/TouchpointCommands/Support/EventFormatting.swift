import Foundation
import Touchpoint

/// How the tool prints events and sessions: one JSON object per line, or a readable line.
enum EventFormatting {
    static func jsonLine(_ event: Event) -> String {
        String(decoding: event.jsonLine().dropLast(), as: UTF8.self)
    }

    static func jsonLine(_ session: EventSession) -> String {
        String(decoding: session.jsonBytes().dropLast(), as: UTF8.self)
    }

    static func humanLine(_ event: Event) -> String {
        let properties =
            event.properties.isEmpty ? "" : "  " + JSONValue.object(event.properties).jsonString(sortedKeys: true)
        return "\(Timestamp.format(event.timestamp))  \(event.userId ?? "anon")  \(event.name)\(properties)"
    }
}
