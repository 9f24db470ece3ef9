import TouchpointCore

/// Which ingest endpoint a body came to: `/v1/batch`, or one of the single-message endpoints.
public enum IngestEndpoint: Sendable, Hashable {
    /// `POST /v1/batch`: `{"batch": [...], "sentAt": ..., "writeKey": ...}`.
    case batch
    /// `POST /v1/track`, `/v1/identify`, …: the body is one message of this type.
    case single(MessageType)
}

/// A request body read into messages: the accepted ones, the rejected ones, and the request's
/// own fields.
public struct DecodedRequest: Sendable, Hashable {
    /// `writeKey` from the body, when the client put it there instead of in the header.
    public var writeKey: String?
    /// `sentAt` from the body, in milliseconds since 1970.
    public var sentAt: Int64?
    /// The messages that passed validation, in request order.
    public var messages: [IngestMessage]
    /// The events that did not, with where and why.
    public var rejections: [IngestRejection]
    /// How many events the request carried.
    public var eventCount: Int
    /// The accepted events that had no `messageId`, with the ids generated for them.
    public var generatedMessageIds: [GeneratedMessageID] = []
}

/// Reads Segment-style request bodies with the foundation's `JSONParser`.
///
/// It never traps: malformed JSON is a ``CollectorError`` naming the byte offset, a body that is
/// not the expected shape names the path, and in a batch each bad event is rejected on its own
/// (`batch[17].messageId: missing`) while the others are kept.
public struct BatchDecoder: Sendable {
    /// The limits applied to events and batches.
    public var limits: IngestLimits

    /// Creates a decoder.
    public init(limits: IngestLimits = .segment) {
        self.limits = limits
    }

    /// Reads one request body.
    /// - Parameters:
    ///   - body: the (already decompressed) body bytes.
    ///   - endpoint: the endpoint the body came to.
    ///   - receivedAt: when the collector received it, milliseconds since 1970 (for timestamp correction).
    /// - Returns: the request's messages and rejections.
    /// - Throws: ``CollectorError`` when the request as a whole is unusable: `invalid_json`,
    ///   `invalid_request` or `too_many_events`. (An invalid message, also the one message of a
    ///   single-message endpoint, is a rejection in the result.)
    public func decode(_ body: UnsafeRawBufferPointer, endpoint: IngestEndpoint, receivedAt: Int64)
        throws(CollectorError) -> DecodedRequest
    {
        try decode(body, endpoint: endpoint, receivedAt: receivedAt, streaming: true)
    }

    /// Reads one request body; with `streaming` false, always through a parsed ``JSONValue`` (the
    /// general way, which tests compare the streaming reader with).
    func decode(_ body: UnsafeRawBufferPointer, endpoint: IngestEndpoint, receivedAt: Int64, streaming: Bool)
        throws(CollectorError) -> DecodedRequest
    {
        if streaming, case .batch = endpoint,
            let streamed = StreamingBatchReader(maximumElements: limits.maximumBatchEvents)
                .read(body.assumingMemoryBound(to: UInt8.self))
        {
            return try decode(streamed, body: body, receivedAt: receivedAt)
        }
        let root: JSONValue
        do {
            root = try JSONParser.parse(body)
        } catch {
            throw CollectorError(.invalidJSON, "body: \(error.description)")
        }
        guard case .object(let members) = root else {
            throw CollectorError(
                .invalidRequest,
                problem: JSONProblem(path: .root, message: "expected an object, found \(root.typeName)"))
        }
        let writeKey = try optionalString(members["writeKey"], at: JSONPath.root.appending("writeKey"))
        let sentAt = try requestTimestamp(members["sentAt"], at: JSONPath.root.appending("sentAt"))
        var reader = MessageReader(limits: limits, sentAt: sentAt, receivedAt: receivedAt)

        switch endpoint {
        case .single(let type):
            // The reader drops a `writeKey` member from what is stored.
            switch reader.read(root, raw: body, at: .root, type: type, batchContext: nil) {
            case .success(let accepted):
                return DecodedRequest(
                    writeKey: writeKey, sentAt: sentAt, messages: [accepted], rejections: [], eventCount: 1,
                    generatedMessageIds: accepted.isMessageIdGenerated
                        ? [GeneratedMessageID(index: 0, messageId: accepted.messageId)] : [])
            case .failure(let problem):
                let rejection = IngestRejection(index: 0, path: problem.path.description, reason: problem.message)
                return DecodedRequest(
                    writeKey: writeKey, sentAt: sentAt, messages: [], rejections: [rejection], eventCount: 1)
            }
        case .batch:
            let batchPath = JSONPath.root.appending("batch")
            guard let batchValue = members["batch"] else {
                throw CollectorError(.invalidRequest, problem: JSONProblem(path: batchPath, message: "missing"))
            }
            guard case .array(let elements) = batchValue else {
                throw CollectorError(
                    .invalidRequest,
                    problem: JSONProblem(path: batchPath, message: "expected an array, found \(batchValue.typeName)"))
            }
            guard elements.count <= limits.maximumBatchEvents else {
                throw CollectorError(
                    .tooManyEvents,
                    problem: JSONProblem(
                        path: batchPath,
                        message: "\(elements.count) events, over the limit of \(limits.maximumBatchEvents) per batch"))
            }
            let batchContext = members["context"]?.objectValue
            // The bytes of each event as sent, to store them without writing them out again.
            var spans = BatchSpans.elements(in: body)
            if spans?.count != elements.count { spans = nil }
            return Self.collect(writeKey: writeKey, sentAt: sentAt, count: elements.count) { index in
                let raw = spans.map { UnsafeRawBufferPointer(rebasing: body[$0[index]]) }
                return reader.read(
                    elements[index], raw: raw, at: batchPath.appending(index: index), type: nil,
                    batchContext: batchContext)
            }
        }
    }

    /// A batch read by ``StreamingBatchReader``: the same checks, in the same order, as above.
    private func decode(_ streamed: StreamingBatchReader.Body, body: UnsafeRawBufferPointer, receivedAt: Int64)
        throws(CollectorError) -> DecodedRequest
    {
        let writeKey = try optionalString(streamed.writeKey, at: JSONPath.root.appending("writeKey"))
        let sentAt = try requestTimestamp(streamed.sentAt, at: JSONPath.root.appending("sentAt"))
        let reader = MessageReader(limits: limits, sentAt: sentAt, receivedAt: receivedAt)
        let batchPath = JSONPath.root.appending("batch")
        let batchContext = streamed.context?.objectValue
        return Self.collect(writeKey: writeKey, sentAt: sentAt, count: streamed.elements.count) { index in
            reader.read(
                streamed.elements[index].fields,
                raw: UnsafeRawBufferPointer(rebasing: body[streamed.elements[index].range]),
                at: batchPath.appending(index: index), type: nil, batchContext: batchContext)
        }
    }

    /// Reads `count` events of a batch, keeping the accepted and listing the rejected by index.
    private static func collect(
        writeKey: String?, sentAt: Int64?, count: Int, read: (Int) -> Result<IngestMessage, JSONProblem>
    ) -> DecodedRequest {
        var messages: [IngestMessage] = []
        messages.reserveCapacity(count)
        var rejections: [IngestRejection] = []
        var generated: [GeneratedMessageID] = []
        for index in 0..<count {
            switch read(index) {
            case .success(let message):
                if message.isMessageIdGenerated {
                    generated.append(GeneratedMessageID(index: index, messageId: message.messageId))
                }
                messages.append(message)
            case .failure(let problem):
                rejections.append(
                    IngestRejection(index: index, path: problem.path.description, reason: problem.message))
            }
        }
        return DecodedRequest(
            writeKey: writeKey, sentAt: sentAt, messages: messages, rejections: rejections, eventCount: count,
            generatedMessageIds: generated)
    }

    /// Reads one request body held in an array.
    public func decode(_ body: [UInt8], endpoint: IngestEndpoint, receivedAt: Int64) throws(CollectorError)
        -> DecodedRequest
    {
        try body.withUnsafeBytes { buffer in
            Result { () throws(CollectorError) in try decode(buffer, endpoint: endpoint, receivedAt: receivedAt) }
        }.get()
    }

    private func optionalString(_ value: JSONValue?, at path: JSONPath) throws(CollectorError) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)?: return text
        case let other?:
            throw CollectorError(
                .invalidRequest, problem: JSONProblem(path: path, message: "expected a string, found \(other.typeName)")
            )
        }
    }

    private func requestTimestamp(_ value: JSONValue?, at path: JSONPath) throws(CollectorError) -> Int64? {
        guard let text = try optionalString(value, at: path) else { return nil }
        guard let date = Timestamp.parse(text) else {
            throw CollectorError(
                .invalidRequest, problem: JSONProblem(path: path, message: "not an ISO-8601 timestamp: \"\(text)\""))
        }
        return Timestamp.milliseconds(date)
    }
}
