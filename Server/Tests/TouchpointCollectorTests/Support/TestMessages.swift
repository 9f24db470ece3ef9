import Foundation
import TouchpointCore

@testable import TouchpointCollector

/// Builders for Segment messages and batches as the SDK sends them.
enum TestMessages {
    static let base = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z

    /// A track message.
    static func track(
        _ name: String, id: String = UUID().uuidString, session: String? = "session-1", user: String? = nil,
        anonymous: String = "anon-1", at offset: TimeInterval = 0, properties: [String: JSONValue] = [:]
    ) -> JSONValue {
        var members: [String: JSONValue] = [
            "type": "track", "event": .string(name), "messageId": .string(id), "anonymousId": .string(anonymous),
            "timestamp": .string(Timestamp.format(base.addingTimeInterval(offset))),
            "properties": .object(properties),
            "context": .object(
                session.map {
                    ["sessionId": .string($0), "library": ["name": "touchpoint-swift", "version": "0.1.0"]]
                }
                    ?? [:]),
        ]
        if let user { members["userId"] = .string(user) }
        return .object(members)
    }

    /// A `/v1/batch` body.
    static func batch(_ messages: [JSONValue], sentAt: Date? = nil, writeKey: String? = nil) -> [UInt8] {
        var members: [String: JSONValue] = ["batch": .array(messages)]
        if let sentAt { members["sentAt"] = .string(Timestamp.format(sentAt)) }
        if let writeKey { members["writeKey"] = .string(writeKey) }
        return JSONValue.object(members).jsonBytes()
    }

    /// An ingest message ready for storage, as the decoder would produce it.
    static func ingest(
        _ name: String, id: String = UUID().uuidString, type: MessageType = .track, session: String? = "session-1",
        user: String? = nil, anonymous: String? = "anon-1", at offset: TimeInterval = 0,
        properties: [String: JSONValue] = [:]
    ) -> IngestMessage {
        let time = Timestamp.milliseconds(base.addingTimeInterval(offset))
        var payload: [String: JSONValue] = [
            "type": .string(type.rawValue), "event": .string(name), "messageId": .string(id),
            "properties": .object(properties),
        ]
        if let session { payload["context"] = ["sessionId": .string(session)] }
        return IngestMessage(
            messageId: id, type: type, name: name, userId: user, anonymousId: anonymous, sessionId: session,
            timestamp: time, originalTimestamp: Timestamp.format(base.addingTimeInterval(offset)), sentAt: nil,
            receivedAt: time + 1000, payload: JSONValue.object(payload).jsonString())
    }

    /// `Basic base64(key:)`.
    static func basic(_ key: String) -> String {
        "Basic " + Data((key + ":").utf8).base64EncodedString()
    }
}
