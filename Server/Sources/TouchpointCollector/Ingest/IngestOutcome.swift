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

    /// The response body: `{"success": true, "accepted": …, "duplicates": …, "rejected": [...]}`.
    public var json: JSONValue {
        .object([
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
        ])
    }
}
