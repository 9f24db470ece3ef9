import Foundation
import TouchpointCore

/// An event the moment the collector stored it, for live views.
///
/// The event has the query API's shape; its ``StoredEvent/sequence`` is 0, since the feed hands
/// events out before anyone reads them back from the database.
public struct LiveEvent: Sendable, Hashable {
    /// The source it was stored for.
    public var source: String
    /// The event. A live event made by the feed parses its stored JSON each time this is read,
    /// on the live view's side (each view reads it once), so that watching costs a request being
    /// stored no JSON parsing.
    public var event: StoredEvent {
        get {
            switch content {
            case .event(let event): return event
            case .message(let message): return Self.storedEvent(message)
            }
        }
        set { content = .event(newValue) }
    }

    private enum Content: Sendable {
        case event(StoredEvent)
        case message(IngestMessage)
    }

    private var content: Content

    /// Creates a live event.
    public init(source: String, event: StoredEvent) {
        self.source = source
        content = .event(event)
    }

    init(_ message: IngestMessage, source: String) {
        self.source = source
        content = .message(message)
    }

    public static func == (left: LiveEvent, right: LiveEvent) -> Bool {
        left.source == right.source && left.event == right.event
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(source)
        hasher.combine(event)
    }

    private static func storedEvent(_ message: IngestMessage) -> StoredEvent {
        let date = Timestamp.date(milliseconds:)
        let payload = (try? JSONParser.parse(message.payload)) ?? .string(message.payload)
        return StoredEvent(
            sequence: 0, messageId: message.messageId, type: message.type.rawValue, name: message.name,
            userId: message.userId, anonymousId: message.anonymousId, sessionId: message.sessionId,
            timestamp: date(message.timestamp), originalTimestamp: message.originalTimestamp,
            sentAt: message.sentAt.map(date), receivedAt: date(message.receivedAt), message: payload)
    }

    /// The event as the query API writes it, plus `source`.
    public var json: JSONValue {
        var members = event.json.objectValue ?? [:]
        members["source"] = .string(source)
        return .object(members)
    }
}
