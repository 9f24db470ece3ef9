import TouchpointCore

/// What an ingest request did: how many events were stored, already known, or rejected.
public struct IngestOutcome: Sendable, Hashable {
    /// The source the events were stored for.
    public var source: String
    /// Events stored now.
    public var accepted: Int
    /// Events whose `messageId` was already stored (by an earlier request or collector).
    public var duplicates: Int
    /// Events not stored because they were invalid, with where and why.
    public var rejections: [IngestRejection]
    /// Events sent without a `messageId`, stored under a generated one: their index in the request
    /// and that id. They cannot be deduplicated (a retry of such an event is stored again).
    public var generatedMessageIds: [GeneratedMessageID] = []

    /// Creates an outcome.
    public init(
        source: String, accepted: Int, duplicates: Int, rejections: [IngestRejection],
        generatedMessageIds: [GeneratedMessageID] = []
    ) {
        self.source = source
        self.accepted = accepted
        self.duplicates = duplicates
        self.rejections = rejections
        self.generatedMessageIds = generatedMessageIds
    }

    /// The response body: `{"success": true, "accepted": …, "duplicates": …, "rejected": [...]}`,
    /// and `generatedMessageIds` with a `warning` when some events had no `messageId`.
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "success": .bool(true),
            "accepted": .int(accepted),
            "duplicates": .int(duplicates),
            "rejected": .array(
                rejections.map {
                    .object([
                        "index": .int($0.index), "path": .string($0.path), "reason": .string($0.reason),
                        "error": .string($0.description),
                    ])
                }),
        ]
        if !generatedMessageIds.isEmpty {
            members["generatedMessageIds"] = .array(
                generatedMessageIds.map { .object(["index": .int($0.index), "messageId": .string($0.messageId)]) })
            members["warning"] = .string(
                "\(generatedMessageIds.count) event(s) had no messageId and were stored under generated ids; "
                    + "they cannot be deduplicated, so a retry stores them again: send a messageId with every event")
        }
        return .object(members)
    }
}

/// An event sent without a `messageId`: its index in the request and the id the collector gave it.
public struct GeneratedMessageID: Sendable, Hashable {
    /// The event's position in the request's `batch` array (0 for single-message endpoints).
    public var index: Int
    /// The generated id it was stored under.
    public var messageId: String

    /// Creates a record.
    public init(index: Int, messageId: String) {
        self.index = index
        self.messageId = messageId
    }
}
