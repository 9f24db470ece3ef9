import Foundation
import TouchpointCore

/// The body of `POST /v1/batch` around already-encoded messages:
/// `{"batch":[…],"sentAt":"<ISO-8601 ms>"}`.
///
/// `sentAt` comes last so the messages are encoded once per batch and only the stamp is written
/// again for each attempt.
enum BatchEnvelope {
    static let prefix = Array(#"{"batch":["#.utf8)
    static let sentAtKey = Array(#"],"sentAt":""#.utf8)
    static let suffix = Array(#""}"#.utf8)

    /// Bytes the envelope adds to the messages (with a 24-character timestamp).
    static let overhead = prefix.count + sentAtKey.count + 24 + suffix.count

    /// The body for `messages` (comma-separated message objects), stamped `sentAt`.
    static func body(messages: [UInt8], sentAt: Date) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(messages.count + overhead + 8)
        body.append(contentsOf: prefix)
        body.append(contentsOf: messages)
        body.append(contentsOf: sentAtKey)
        Timestamp.append(sentAt, to: &body)
        body.append(contentsOf: suffix)
        return body
    }
}
