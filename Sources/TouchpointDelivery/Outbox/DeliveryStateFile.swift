import Foundation
import TouchpointCore

/// What a destination keeps across launches: the acknowledged cursor, the retry state and
/// whether delivery is enabled. One small file per destination, replaced atomically:
///
/// ```
/// <base>/state/delivery/<destination id>.json
/// {"cursor":{"eventOffset":4096,"journalOffset":0,"sessionId":"…"},"enabled":true,
///  "endpoint":"https://…/v1/batch","failures":2,"networkFailure":true,
///  "nextAttempt":"2026-01-01T00:00:03.000Z","version":1}
/// ```
struct DeliveryStateFile: Sendable {
    /// The state the file holds.
    struct Contents: Sendable, Hashable {
        var cursor: DeliveryCursor = .start
        var failures = 0
        var nextAttempt: Date?
        var lastFailureWasNetwork = false
        var isEnabled = true
    }

    /// The file.
    let path: String
    /// The destination's batch URL, recorded for people reading the file.
    let endpoint: URL

    init(directory: URL, destination: DeliveryDestination) {
        path = Self.path(base: directory, destinationID: destination.id)
        endpoint = destination.batchURL
    }

    /// Reads the file: nil when there is none yet.
    /// - Throws: a message naming the file and what is wrong with it.
    func read() throws -> Contents? {
        guard let bytes = try AtomicFile.read(path) else { return nil }
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes)
        } catch {
            throw DeliveryError(code: .corruptState, reason: "\(path): \(error)")
        }
        func problem(_ field: String) -> DeliveryError {
            DeliveryError(code: .corruptState, reason: "\(path): \"\(field)\" is missing or malformed")
        }
        guard json["version"]?.intValue == 1 else { throw problem("version") }
        guard let cursor = json["cursor"], let journalOffset = cursor["journalOffset"]?.intValue,
            let eventOffset = cursor["eventOffset"]?.intValue, journalOffset >= 0, eventOffset >= 0
        else { throw problem("cursor") }
        // A cursor names its session once it is past the start; a damaged id must not turn
        // into "no session", which would skip or release events that were never delivered.
        let sessionId: UUID?
        switch cursor["sessionId"] {
        case nil, .null?:
            guard journalOffset == 0, eventOffset == 0 else { throw problem("cursor.sessionId") }
            sessionId = nil
        case let value?:
            guard let id = value.stringValue.flatMap(UUID.init(uuidString:)) else { throw problem("cursor.sessionId") }
            sessionId = id
        }
        var contents = Contents()
        contents.cursor = DeliveryCursor(
            journalOffset: Int64(journalOffset), sessionId: sessionId, eventOffset: Int64(eventOffset))
        contents.failures = max(0, json["failures"]?.intValue ?? 0)
        contents.nextAttempt = json["nextAttempt"]?.stringValue.flatMap(Timestamp.parse)
        contents.lastFailureWasNetwork = json["networkFailure"]?.boolValue ?? false
        contents.isEnabled = json["enabled"]?.boolValue ?? true
        return contents
    }

    /// The `enabled` flag alone, from a file whose other fields may be damaged: a user's opt-out
    /// outlives a damaged cursor. Nil when the file is absent, not JSON, or has no such flag.
    func enabledFlag() -> Bool? {
        guard let bytes = try? AtomicFile.read(path), let json = try? JSONParser.parse(bytes) else { return nil }
        return json["enabled"]?.boolValue
    }

    /// Replaces the file with `contents`.
    ///
    /// Not fsynced: a write lost in a power cut leaves the previous cursor, and events after it
    /// are sent again, which the collector deduplicates by message id. A process kill loses
    /// nothing (the rename is atomic).
    func write(_ contents: Contents) throws(FileError) {
        var cursor: [String: JSONValue] = [
            "journalOffset": .int(Int(contents.cursor.journalOffset)),
            "eventOffset": .int(Int(contents.cursor.eventOffset)),
        ]
        if let session = contents.cursor.sessionId { cursor["sessionId"] = .string(session.uuidString) }
        var members: [String: JSONValue] = [
            "version": 1,
            "endpoint": .string(endpoint.absoluteString),
            "cursor": .object(cursor),
            "failures": .int(contents.failures),
            "networkFailure": .bool(contents.lastFailureWasNetwork),
            "enabled": .bool(contents.isEnabled),
        ]
        if let next = contents.nextAttempt { members["nextAttempt"] = .string(Timestamp.format(next)) }
        var bytes = JSONValue.object(members).jsonBytes(sortedKeys: true)
        bytes.append(10)
        try AtomicFile.write(bytes, to: path, durable: false)
    }

    /// `<base>/state/delivery/<destination id>.json`.
    static func path(base: URL, destinationID: String) -> String {
        base.path + "/state/delivery/" + destinationID + ".json"
    }
}
