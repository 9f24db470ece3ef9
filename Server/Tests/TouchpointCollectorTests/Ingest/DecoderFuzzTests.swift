import HTTPTypes
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// Bounded random testing of everything that reads request bytes: it must never trap, and its
/// answers must be consistent. (A libFuzzer run of the same entry points is described in the README.)
struct DecoderFuzzTests {
    static let decoder = BatchDecoder()

    /// A realistic batch to mutate.
    static let seedBody: [UInt8] = TestMessages.batch(
        [
            TestMessages.track(
                "checkout", id: "a", user: "u", properties: ["amount": 12.5, "items": [1, 2], "ok": true]),
            .object(["type": "identify", "messageId": "b", "userId": "u", "traits": ["name": "Zoë \u{1F600}"]]),
            .object(["type": "page", "messageId": "c", "anonymousId": "x", "name": "Home", "context": ["sessionId": 7]]
            ),
        ], sentAt: TestMessages.base, writeKey: "k")

    /// The outcome of decoding `bytes`, through the streaming batch reader or the general way.
    /// Generated message ids (random) read `generated`, so two decodes compare equal.
    static func outcome(_ bytes: [UInt8], endpoint: IngestEndpoint, streaming: Bool) -> Result<
        DecodedRequest, CollectorError
    > {
        bytes.withUnsafeBytes { buffer in
            Result { () throws(CollectorError) in
                var request = try decoder.decode(
                    buffer, endpoint: endpoint, receivedAt: 1_000_000, streaming: streaming)
                for index in request.messages.indices where request.messages[index].isMessageIdGenerated {
                    request.messages[index].messageId = "generated"
                }
                for index in request.generatedMessageIds.indices {
                    request.generatedMessageIds[index].messageId = "generated"
                }
                return request
            }
        }
    }

    /// Whether the streaming reader reads `bytes` itself (rather than leaving them to the general way).
    static func streams(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { StreamingBatchReader(maximumElements: 2500).read($0) != nil }
    }

    /// Checks the invariants of one decode: no trap; every event either accepted or rejected once;
    /// the streaming reader and the general one agree on everything (messages, rejections, errors).
    static func check(_ bytes: [UInt8], endpoint: IngestEndpoint = .batch) {
        #expect(
            outcome(bytes, endpoint: endpoint, streaming: true) == outcome(bytes, endpoint: endpoint, streaming: false),
            "\(String(decoding: bytes, as: UTF8.self))")
        do {
            let request = try decoder.decode(bytes, endpoint: endpoint, receivedAt: 1_000_000)
            #expect(request.messages.count + request.rejections.count == request.eventCount)
            // Each stored payload is one of the events the parser saw, byte spans and all.
            let events = endpoint == .batch ? ((try? JSONParser.parse(bytes))?["batch"]?.arrayValue ?? []) : []
            for message in request.messages {
                #expect(!message.messageId.isEmpty)
                #expect(message.userId != nil || message.anonymousId != nil)
                // What is stored can be read back.
                let payload = try? JSONParser.parse(message.payload)
                #expect(payload != nil)
                if endpoint == .batch, let payload { #expect(events.contains(payload)) }
            }
            for rejection in request.rejections {
                #expect(rejection.path.hasPrefix("batch[\(rejection.index)]") || endpoint != .batch)
            }
        } catch {
            #expect(!error.message.isEmpty)
            #expect(error.status.code == 400)
        }
    }

    @Test func survivesRandomBytes() {
        var random = SeededRandomNumberGenerator(seed: 0xC011_EC70)
        for _ in 0..<3000 {
            let length = Int(random.next() % 300)
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            Self.check(bytes)
            Self.check(bytes, endpoint: .single(.track))
        }
    }

    @Test func survivesMutatedBatches() {
        var random = SeededRandomNumberGenerator(seed: 42)
        let alphabet = Array(#"{}[]",:0123456789.eE+-tfnul\ "#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xA9, 0xED, 0xA0, 0xFF]
        var streamed = 0
        for _ in 0..<4000 {
            var bytes = Self.seedBody
            for _ in 0..<(1 + random.next() % 4) {
                let position = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 4 {
                case 0: bytes[position] = alphabet[Int(random.next() % UInt64(alphabet.count))]
                case 1: bytes.remove(at: position)
                case 2: bytes.insert(alphabet[Int(random.next() % UInt64(alphabet.count))], at: position)
                default: bytes.removeLast(Int(random.next() % UInt64(min(bytes.count, 40))))
                }
                if bytes.isEmpty { break }
            }
            Self.check(bytes)
            if Self.streams(bytes) { streamed += 1 }
        }
        #expect(streamed > 400, "\(streamed) of 4000 streamed")
    }

    @Test func survivesRandomJSONShapes() {
        var random = SeededRandomNumberGenerator(seed: 7)
        func value(depth: Int) -> JSONValue {
            switch random.next() % (depth > 3 ? 5 : 7) {
            case 0: return .null
            case 1: return .bool(random.next() % 2 == 0)
            case 2: return .int(Int(truncatingIfNeeded: random.next()))
            case 3: return .double(Double(random.next() % 1000) / 7)
            case 4:
                let words = ["track", "identify", "page", "m1", "", "2026-01-01T00:00:00Z", "a\u{0}b", "ü"]
                return .string(words[Int(random.next() % UInt64(words.count))])
            case 5: return .array((0..<(random.next() % 4)).map { _ in value(depth: depth + 1) })
            default:
                let keys = [
                    "type", "messageId", "userId", "anonymousId", "event", "timestamp", "context", "sessionId",
                    "properties", "traits", "name",
                ]
                var members: [String: JSONValue] = [:]
                for _ in 0..<(random.next() % 8) {
                    members[keys[Int(random.next() % UInt64(keys.count))]] = value(depth: depth + 1)
                }
                return .object(members)
            }
        }
        var streamed = 0
        for _ in 0..<2000 {
            let batch: JSONValue = .object([
                "batch": .array((0..<(random.next() % 6)).map { _ in value(depth: 1) }),
                "sentAt": random.next() % 2 == 0 ? "2026-01-01T00:00:05Z" : value(depth: 3),
            ])
            Self.check(batch.jsonBytes())
            if Self.streams(batch.jsonBytes()) { streamed += 1 }
        }
        // The comparison is worth something only if the streaming reader took many of them (any
        // element that is not an object sends the whole body the general way).
        #expect(streamed > 300, "\(streamed) of 2000 streamed")
    }

    @Test func inflaterSurvivesRandomAndTruncatedStreams() throws {
        var random = SeededRandomNumberGenerator(seed: 99)
        let valid = try Gzip.compress(Self.seedBody)
        for round in 0..<2000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<(random.next() % 200)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            } else {
                bytes = valid
                bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next())
                bytes.removeLast(Int(random.next() % 8))
            }
            do {
                let output = try bytes.withUnsafeBytes { try BodyInflater.inflate($0, limit: 4096) }
                #expect(output.count <= 4096)
            } catch let error as CollectorError {
                #expect([400, 413].contains(error.status.code))
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }
        #expect(try valid.withUnsafeBytes { try BodyInflater.inflate($0, limit: 4096) } == Self.seedBody)
    }
}
