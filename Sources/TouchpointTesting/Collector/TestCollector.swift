import Foundation
import TouchpointCore

/// A Segment-compatible batch endpoint for tests: `POST /v1/batch`, answered like Segment's
/// HTTP Tracking API, with every stored message kept for inspection.
///
/// It checks the write key (HTTP Basic, when one is given), decodes `Content-Encoding: gzip`,
/// answers `413` above the body limit and `400` to a body that is not a batch, deduplicates by
/// `messageId` (a message delivered twice is acknowledged but stored once) and lists messages it
/// cannot take in a `rejected` array of its `200` answer. Serve it with ``TestHTTPServer`` or
/// behind a ``FaultInjectingServer``:
///
/// ```swift
/// let collector = TestCollector(writeKey: "wk")
/// let server = try TestHTTPServer(handler: collector.handle)
/// // … deliver to server.baseURL, then:
/// #expect(collector.storedCount == 1_000)
/// #expect(collector.counters.duplicates == 0)
/// ```
public final class TestCollector: Sendable {
    /// A stored message.
    public struct Message: Sendable, Hashable {
        /// `messageId`.
        public var messageId: String
        /// `type`: `track`, `identify`, `screen`, ….
        public var type: String
        /// `event` of a track, `name` of a screen.
        public var name: String?
        /// `context.sessionId`.
        public var sessionId: String?
        /// `userId`.
        public var userId: String?
        /// `anonymousId`.
        public var anonymousId: String?
        /// `timestamp`.
        public var timestamp: String?
        /// The batch's `sentAt`.
        public var sentAt: String?
        /// `properties`, or `traits` of an identify.
        public var properties: JSONValue?
        /// `context`.
        public var context: JSONValue?
        /// `previousId` of an alias.
        public var previousId: String?
    }

    /// What the collector received.
    public struct Counters: Sendable, Hashable {
        /// Requests to `/v1/batch`.
        public var requests = 0
        /// Requests with a gzip body.
        public var gzipRequests = 0
        /// Requests answered with a 4xx.
        public var refusedRequests = 0
        /// Messages received, duplicates included.
        public var receivedMessages = 0
        /// Messages received again after they were stored.
        public var duplicates = 0
        /// Messages listed as rejected.
        public var rejectedMessages = 0

        /// Creates zeroed counters.
        public init() {}
    }

    private struct State {
        var seen = Set<String>()
        var stored: [Message] = []
        var storedCount = 0
        var counters = Counters()
    }

    /// The write key requests must carry; nil accepts any.
    public let writeKey: String?
    /// The largest (decompressed) body accepted; larger ones get `413`.
    public let maximumBodyBytes: Int
    /// Whether stored messages are kept (false keeps only ids and counts, for large volumes).
    public let keepsMessages: Bool
    private let state = Locked(State())

    /// Creates a collector.
    /// - Parameters:
    ///   - writeKey: the write key to require; nil accepts any request.
    ///   - maximumBodyBytes: the body limit (500 KB, Segment's, by default).
    ///   - keepsMessages: whether to keep each stored message (true) or only its id.
    public init(writeKey: String? = nil, maximumBodyBytes: Int = 500 * 1024, keepsMessages: Bool = true) {
        self.writeKey = writeKey
        self.maximumBodyBytes = maximumBodyBytes
        self.keepsMessages = keepsMessages
    }

    /// The stored messages in the order they arrived (empty when ``keepsMessages`` is false).
    public var messages: [Message] { state.withLock { $0.stored } }

    /// How many distinct messages are stored.
    public var storedCount: Int { state.withLock { $0.storedCount } }

    /// What was received so far.
    public var counters: Counters { state.withLock { $0.counters } }

    /// Whether a message with this id is stored.
    public func contains(messageId: String) -> Bool { state.withLock { $0.seen.contains(messageId) } }

    /// Waits until at least `count` messages are stored, or `timeout` seconds pass.
    /// - Returns: whether the count was reached.
    public func waitUntilStored(_ count: Int, timeout: Double = 60) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while storedCount < count {
            if Date() >= deadline { return false }
            try? await Task.sleep(nanoseconds: 2_000_000)
        }
        return true
    }

    /// Answers one request (pass it as a ``TestHTTPServer/Handler``).
    @Sendable public func handle(_ request: TestHTTPRequest) async -> TestHTTPResponse {
        guard request.path == "/v1/batch" else { return .json(["error": "not found"], status: 404) }
        guard request.method == .post else { return .json(["error": "use POST"], status: 405) }
        let gzipped = request.headers["Content-Encoding"]?.lowercased() == "gzip"
        state.withLock { state in
            state.counters.requests += 1
            if gzipped { state.counters.gzipRequests += 1 }
        }
        if let writeKey,
            request.headers["Authorization"] != TransportHeaders.basicAuthorization(user: writeKey)
        {
            return refuse(401, "missing or wrong write key")
        }
        var body = request.body
        if gzipped {
            do {
                body = try Gzip.decompress(body, maximumSize: maximumBodyBytes + 1)
            } catch {
                if error.code == .tooLarge { return refuse(413, "the body is larger than \(maximumBodyBytes) bytes") }
                return refuse(400, "the gzip body does not decode: \(error)")
            }
        }
        guard body.count <= maximumBodyBytes else {
            return refuse(413, "the body is \(body.count) bytes, over \(maximumBodyBytes)")
        }
        let json: JSONValue
        do {
            json = try JSONParser.parse(body)
        } catch {
            return refuse(400, "the body is not JSON: \(error)")
        }
        guard let batch = json["batch"]?.arrayValue else { return refuse(400, "the body has no \"batch\" array") }
        let sentAt = json["sentAt"]?.stringValue
        var rejected: [JSONValue] = []
        var accepted: [(Int, Message)] = []
        for (index, item) in batch.enumerated() {
            guard let messageId = item["messageId"]?.stringValue, !messageId.isEmpty else {
                rejected.append(["index": .int(index), "reason": "missing messageId"])
                continue
            }
            guard let type = item["type"]?.stringValue else {
                rejected.append(["index": .int(index), "reason": "missing type"])
                continue
            }
            accepted.append(
                (
                    index,
                    Message(
                        messageId: messageId, type: type, name: item["event"]?.stringValue ?? item["name"]?.stringValue,
                        sessionId: item["context"]?["sessionId"]?.stringValue, userId: item["userId"]?.stringValue,
                        anonymousId: item["anonymousId"]?.stringValue, timestamp: item["timestamp"]?.stringValue,
                        sentAt: sentAt, properties: item["properties"] ?? item["traits"], context: item["context"],
                        previousId: item["previousId"]?.stringValue)
                ))
        }
        state.withLock { state in
            state.counters.receivedMessages += batch.count
            state.counters.rejectedMessages += rejected.count
            for (_, message) in accepted {
                guard state.seen.insert(message.messageId).inserted else {
                    state.counters.duplicates += 1
                    continue
                }
                state.storedCount += 1
                if keepsMessages { state.stored.append(message) }
            }
        }
        var answer: [String: JSONValue] = ["success": true]
        if !rejected.isEmpty { answer["rejected"] = .array(rejected) }
        return .json(.object(answer))
    }

    private func refuse(_ status: Int, _ reason: String) -> TestHTTPResponse {
        state.withLock { $0.counters.refusedRequests += 1 }
        return .json(["error": .string(reason)], status: status)
    }
}
