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

    /// Reads `value` found at `path`.
    /// - Parameters:
    ///   - type: the endpoint's type for single-message endpoints; nil in a batch, where `type` is required.
    ///   - batchContext: the batch's top-level `context`, consulted for `sessionId`.
    mutating func read(
        _ value: JSONValue, at path: JSONPath, type endpointType: MessageType?, batchContext: [String: JSONValue]?
    ) -> Result<IngestMessage, JSONProblem> {
        guard case .object(let members) = value else {
            return .failure(JSONProblem(path: path, message: "expected an object, found \(value.typeName)"))
        }
        writer.reset()
        writer.object(members)
        let size = writer.bytes.count
        guard size <= limits.maximumEventBytes else {
            return .failure(
                JSONProblem(
                    path: path, message: "\(size) bytes, over the limit of \(limits.maximumEventBytes) bytes per event")
            )
        }
        do {
            let type = try endpointType ?? Self.type(members["type"], at: path.appending("type"))
            guard let messageId = try Self.identifier(members["messageId"], at: path.appending("messageId")) else {
                throw JSONProblem(path: path.appending("messageId"), message: "missing")
            }
            let userId = try Self.identifier(members["userId"], at: path.appending("userId"))
            let anonymousId = try Self.identifier(members["anonymousId"], at: path.appending("anonymousId"))
            guard userId != nil || anonymousId != nil else {
                throw JSONProblem(path: path, message: "needs a userId or an anonymousId")
            }
            let name: String?
            switch type {
            case .track:
                guard let event = try Self.text(members["event"], at: path.appending("event")) else {
                    throw JSONProblem(path: path.appending("event"), message: "missing")
                }
                name = event
            case .page, .screen:
                name = try Self.text(members["name"], at: path.appending("name"))
            case .identify, .group, .alias:
                name = nil
            }
            for key in ["properties", "traits", "context", "integrations"] {
                try Self.objectOrAbsent(members[key], at: path.appending(key))
            }
            let contextPath = path.appending("context")
            var sessionId = try Self.identifier(
                members["context"]?["sessionId"], at: contextPath.appending("sessionId"))
            if sessionId == nil, let batchContext {
                sessionId = try Self.identifier(
                    batchContext["sessionId"], at: JSONPath.root.appending("context").appending("sessionId"))
            }
            let originalTimestamp = try Self.text(members["timestamp"], at: path.appending("timestamp"))
            var eventTime: Int64?
            if let originalTimestamp {
                guard let date = Timestamp.parse(originalTimestamp) else {
                    throw JSONProblem(
                        path: path.appending("timestamp"),
                        message: "not an ISO-8601 timestamp: \"\(originalTimestamp)\"")
                }
                eventTime = Timestamp.milliseconds(date)
            }
            let messageSentAt = try Self.text(members["sentAt"], at: path.appending("sentAt")).flatMap {
                Timestamp.parse($0).map(Timestamp.milliseconds)
            }
            let sent = sentAt ?? messageSentAt
            return .success(
                IngestMessage(
                    messageId: messageId, type: type, name: name, userId: userId, anonymousId: anonymousId,
                    sessionId: sessionId,
                    timestamp: TimestampCorrection.corrected(
                        timestamp: eventTime, sentAt: sent, receivedAt: receivedAt),
                    originalTimestamp: originalTimestamp, sentAt: sent, receivedAt: receivedAt,
                    payload: String(decoding: writer.bytes, as: UTF8.self)))
        } catch let problem as JSONProblem {
            return .failure(problem)
        } catch {
            return .failure(JSONProblem(path: path, message: "\(error)"))
        }
    }

    private static func type(_ value: JSONValue?, at path: JSONPath) throws -> MessageType {
        guard let text = try text(value, at: path) else { throw JSONProblem(path: path, message: "missing") }
        guard let type = MessageType(rawValue: text) else {
            let known = MessageType.allCases.map(\.rawValue).joined(separator: ", ")
            throw JSONProblem(path: path, message: "unknown type \"\(text)\"; expected one of \(known)")
        }
        return type
    }

    /// A non-empty string, or nil when absent or null.
    private static func text(_ value: JSONValue?, at path: JSONPath) throws -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)?:
            guard !text.isEmpty else { throw JSONProblem(path: path, message: "empty") }
            return text
        case let other?: throw JSONProblem(path: path, message: "expected a string, found \(other.typeName)")
        }
    }

    /// An id: a non-empty string or an integer (written as text), at most 256 bytes.
    private static func identifier(_ value: JSONValue?, at path: JSONPath) throws -> String? {
        let id: String?
        if case .int(let number)? = value {
            id = String(number)
        } else {
            id = try text(value, at: path)
        }
        if let id, id.utf8.count > maximumIdentifierBytes {
            throw JSONProblem(path: path, message: "longer than \(maximumIdentifierBytes) bytes")
        }
        return id
    }

    private static func objectOrAbsent(_ value: JSONValue?, at path: JSONPath) throws {
        switch value {
        case nil, .null?, .object?: return
        case let other?: throw JSONProblem(path: path, message: "expected an object, found \(other.typeName)")
        }
    }
}
