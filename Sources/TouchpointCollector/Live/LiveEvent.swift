import Foundation
import TouchpointCore

/// An event the moment the collector stored it, for live views.
///
/// The event has the query API's shape; its ``StoredEvent/sequence`` is 0, since the feed hands
/// events out before anyone reads them back from the database.
public struct LiveEvent: Sendable, Hashable {
    /// The source it was stored for.
    public var source: String
    /// The event.
    public var event: StoredEvent

    /// Creates a live event.
    public init(source: String, event: StoredEvent) {
        self.source = source
        self.event = event
    }

    init(_ message: IngestMessage, source: String) {
        let date = SQLCollectorStorage.date
        let payload = (try? JSONParser.parse(message.payload)) ?? .string(message.payload)
        self.init(
            source: source,
            event: StoredEvent(
                sequence: 0, messageId: message.messageId, type: message.type.rawValue, name: message.name,
                userId: message.userId, anonymousId: message.anonymousId, sessionId: message.sessionId,
                timestamp: date(message.timestamp), originalTimestamp: message.originalTimestamp,
                sentAt: message.sentAt.map(date), receivedAt: date(message.receivedAt), message: payload))
    }

    /// The event as the query API writes it, plus `source`.
    public var json: JSONValue {
        var members = event.json.objectValue ?? [:]
        members["source"] = .string(source)
        return .object(members)
    }
}
