import Foundation
import Testing
import TouchpointCore

@testable import TouchpointCollector

struct BatchDecoderTests {
    let decoder = BatchDecoder()
    let receivedAt = Timestamp.milliseconds(TestMessages.base.addingTimeInterval(3600))

    @Test func readsABatchAsTheSDKSendsIt() throws {
        let body = TestMessages.batch(
            [
                TestMessages.track("checkout", id: "m1", session: "s1", user: "u1", properties: ["amount": 120]),
                .object([
                    "type": "identify", "messageId": "m2", "userId": "u1", "traits": ["plan": "pro"],
                    "timestamp": .string(Timestamp.format(TestMessages.base)),
                ]),
                .object(["type": "screen", "messageId": "m3", "anonymousId": "a", "name": "Home"]),
            ], writeKey: "key")
        let request = try decoder.decode(body, endpoint: .batch, receivedAt: receivedAt)
        #expect(request.writeKey == "key")
        #expect(request.eventCount == 3)
        #expect(request.rejections.isEmpty)
        #expect(request.messages.map(\.messageId) == ["m1", "m2", "m3"])
        #expect(request.messages.map(\.type) == [.track, .identify, .screen])
        #expect(request.messages.map(\.name) == ["checkout", nil, "Home"])
        let track = request.messages[0]
        #expect(track.userId == "u1")
        #expect(track.sessionId == "s1")
        #expect(track.originalTimestamp == "2026-01-01T00:00:00.000Z")
        let payload = try JSONParser.parse(track.payload)
        #expect(payload["properties"]?["amount"] == 120)
        // Without sentAt the client's timestamp stands; without timestamp, the time of receipt.
        #expect(track.timestamp == Timestamp.milliseconds(TestMessages.base))
        #expect(request.messages[2].timestamp == receivedAt)
    }

    @Test func correctsClockSkewFromSentAt() throws {
        // The device clock is 10 minutes fast: it stamped the event 5 s before sending.
        let deviceNow = TestMessages.base.addingTimeInterval(600)
        let message = TestMessages.track("tap", at: 595)
        let body = TestMessages.batch([message], sentAt: deviceNow)
        let decoded = try decoder.decode(body, endpoint: .batch, receivedAt: Timestamp.milliseconds(TestMessages.base))
        let event = try #require(decoded.messages.first)
        #expect(event.timestamp == Timestamp.milliseconds(TestMessages.base) - 5000)
        #expect(event.sentAt == Timestamp.milliseconds(deviceNow))
        #expect(event.originalTimestamp == Timestamp.format(TestMessages.base.addingTimeInterval(595)))
    }

    @Test func keepsGoodEventsAndNamesTheBadOnes() throws {
        var messages = (0..<20).map { TestMessages.track("e\($0)", id: "m\($0)") }
        messages[3] = .object(["type": "track", "event": "x", "anonymousId": "a"])  // no messageId
        messages[5] = .object(["type": "teleport", "messageId": "t", "anonymousId": "a"])
        messages[7] = .object(["type": "track", "messageId": "n", "event": "x"])  // no user
        messages[9] = .object(["type": "track", "messageId": "p", "anonymousId": "a", "event": "x", "properties": [1]])
        messages[11] = .object([
            "type": "track", "messageId": "q", "anonymousId": "a", "event": "x", "timestamp": "yesterday",
        ])
        messages[13] = .string("not an event")
        messages[15] = .object([
            "type": "track", "messageId": "s", "anonymousId": "a", "event": "x", "sentAt": "whenever",
        ])
        messages[17] = .object(["type": "track", "messageId": "r", "anonymousId": "a"])  // no event name
        messages[18] = .object([
            "type": "track", "messageId": "l", "anonymousId": "a", "event": .string(String(repeating: "é", count: 101)),
        ])
        messages[19] = .object([
            "type": "screen", "messageId": "k", "anonymousId": "a", "name": .string(String(repeating: "s", count: 201)),
        ])
        let request = try decoder.decode(TestMessages.batch(messages), endpoint: .batch, receivedAt: receivedAt)
        #expect(request.messages.count == 11)
        // A message without a messageId is kept under a generated one, and listed.
        #expect(request.generatedMessageIds.map(\.index) == [3])
        #expect(request.generatedMessageIds.first?.messageId.hasPrefix("generated-") == true)
        #expect(
            request.messages.filter(\.isMessageIdGenerated).map(\.messageId)
                == request.generatedMessageIds.map(\.messageId))
        #expect(
            request.rejections.map(\.description) == [
                "batch[5].type: unknown type \"teleport\"; expected one of track, identify, page, screen, group, alias",
                "batch[7]: needs a userId or an anonymousId",
                "batch[9].properties: expected an object, found array",
                "batch[11].timestamp: not an ISO-8601 timestamp: \"yesterday\"",
                "batch[13]: expected an object, found string",
                "batch[15].sentAt: not an ISO-8601 timestamp: \"whenever\"",
                "batch[17].event: missing",
                "batch[18].event: longer than 200 bytes (202)",
                "batch[19].name: longer than 200 bytes (201)",
            ])
        #expect(request.rejections.map(\.index) == [5, 7, 9, 11, 13, 15, 17, 18, 19])
    }

    @Test func rejectsEventsOverTheSizeLimit() throws {
        let big = String(repeating: "x", count: 33 * 1024)
        let body = TestMessages.batch([
            TestMessages.track("small", id: "a"),
            TestMessages.track("big", id: "b", properties: ["blob": .string(big)]),
        ])
        let request = try decoder.decode(body, endpoint: .batch, receivedAt: receivedAt)
        #expect(request.messages.map(\.messageId) == ["a"])
        #expect(request.rejections.first?.path == "batch[1]")
        #expect(request.rejections.first?.reason.contains("over the limit of 32768 bytes per event") == true)
    }

    @Test func refusesBatchesOverTheEventLimit() throws {
        let decoder = BatchDecoder(limits: IngestLimits(maximumBatchEvents: 3))
        let body = TestMessages.batch((0..<4).map { TestMessages.track("e", id: "m\($0)") })
        #expect(
            throws: CollectorError(
                .tooManyEvents, "batch: 4 events, over the limit of 3 per batch", path: "batch",
                problems: [
                    JSONProblem(
                        path: JSONPath.root.appending("batch"), message: "4 events, over the limit of 3 per batch")
                ])
        ) {
            try decoder.decode(body, endpoint: .batch, receivedAt: 0)
        }
    }

    @Test(arguments: [
        ("{\"batch\": [", "invalid_json", "body: invalid JSON at byte 11: unexpected end of input, expected a value"),
        ("[1, 2]", "invalid_request", "$: expected an object, found array"),
        ("{}", "invalid_request", "batch: missing"),
        ("{\"batch\": {}}", "invalid_request", "batch: expected an array, found object"),
        ("{\"batch\": [], \"sentAt\": \"soon\"}", "invalid_request", "sentAt: not an ISO-8601 timestamp: \"soon\""),
        ("{\"batch\": [], \"writeKey\": 7}", "invalid_request", "writeKey: expected a string, found number"),
    ])
    func refusesUnusableBodies(body: String, code: String, message: String) {
        do {
            _ = try decoder.decode(Array(body.utf8), endpoint: .batch, receivedAt: 0)
            Issue.record("expected an error for \(body)")
        } catch {
            #expect(error.code.rawValue == code)
            #expect(error.message == message)
        }
    }

    @Test func aWriteKeyInsideABatchElementIsNotStored() throws {
        let body = Array(
            #"{"batch":[{"type":"track","event":"e","messageId":"m1","userId":"u","writeKey":"secret"},{"type":"track","event":"e","messageId":"m2","userId":"u"}]}"#
                .utf8)
        let request = try decoder.decode(body, endpoint: .batch, receivedAt: receivedAt)
        #expect(request.messages.count == 2)
        for message in request.messages {
            #expect(!message.payload.contains("secret"), "\(message.messageId)")
            #expect(try JSONParser.parse(message.payload)["writeKey"] == nil)
            #expect(try JSONParser.parse(message.payload)["event"] == "e")
        }
    }

    @Test func readsSingleMessageEndpoints() throws {
        let body = Array(
            #"{"writeKey":"k","messageId":"m","userId":"u","traits":{"name":"Ada"},"sentAt":"2026-01-01T00:00:00Z"}"#
                .utf8)
        let request = try decoder.decode(body, endpoint: .single(.identify), receivedAt: receivedAt)
        #expect(request.writeKey == "k")
        let message = try #require(request.messages.first)
        #expect(message.type == .identify)
        #expect(message.userId == "u")
        // The write key is not stored with the event.
        #expect(try JSONParser.parse(message.payload)["writeKey"] == nil)
        #expect(try JSONParser.parse(message.payload)["traits"]?["name"] == "Ada")

        let bad = try decoder.decode(Array(#"{"userId":"u"}"#.utf8), endpoint: .single(.track), receivedAt: 0)
        #expect(bad.messages.isEmpty)
        #expect(bad.rejections.map(\.description) == ["event: missing"])
    }

    @Test func takesTheSessionFromTheBatchContextWhenTheEventHasNone() throws {
        let body = Array(
            #"{"context":{"sessionId":"outer"},"batch":[{"type":"track","event":"e","messageId":"m","anonymousId":"a"}]}"#
                .utf8)
        let request = try decoder.decode(body, endpoint: .batch, receivedAt: 0)
        #expect(request.messages.first?.sessionId == "outer")
    }

    @Test func acceptsNumericIdsAsText() throws {
        let body = Array(#"{"batch":[{"type":"track","event":"e","messageId":42,"userId":7}]}"#.utf8)
        let message = try #require(try decoder.decode(body, endpoint: .batch, receivedAt: 0).messages.first)
        #expect(message.messageId == "42")
        #expect(message.userId == "7")
    }

    @Test func storesEachEventAsTheBytesTheClientSent() throws {
        let first = #"{"type":"track", "event":"a","messageId":"1","anonymousId":"x" ,"properties":{"s":"\u00e9\"]}"}}"#
        let second = #"{"type":"track","event":"b","messageId":"2","anonymousId":"x","n":[1,{"x":[]}]}"#
        let body = #"{ "sentAt": "2026-01-01T00:00:00Z", "batch" : [ "# + first + " ,\n\t" + second + " ] }"
        let request = try decoder.decode(Array(body.utf8), endpoint: .batch, receivedAt: 0)
        #expect(request.messages.map(\.payload) == [first, second])
        #expect(try JSONParser.parse(request.messages[0].payload)["properties"]?["s"] == "é\"]}")
    }

    @Test func findsTheBatchTheParserFinds() throws {
        // An escaped key names the same member; of duplicate members the parser keeps the last.
        let body =
            #"{"batch":[{"type":"track","event":"old","messageId":"1","anonymousId":"x"}],"b\u0061tch":[{"type":"track","event":"new","messageId":"2","anonymousId":"x"}]}"#
        let request = try decoder.decode(Array(body.utf8), endpoint: .batch, receivedAt: 0)
        #expect(request.messages.map(\.name) == ["new"])
        #expect(try JSONParser.parse(request.messages[0].payload)["event"] == "new")
    }

    @Test func leavesTheWriteKeyOutOfSingleMessages() throws {
        let plain = #"{"messageId":"m","userId":"u","event":"e"}"#
        let stored = try decoder.decode(Array(plain.utf8), endpoint: .single(.track), receivedAt: 0)
        #expect(stored.messages.first?.payload == plain)
        let keyed = #"{"messageId":"m","userId":"u","event":"e","writeKey":"secret"}"#
        let rewritten = try decoder.decode(Array(keyed.utf8), endpoint: .single(.track), receivedAt: 0)
        #expect(rewritten.messages.first?.payload.contains("secret") == false)
    }
}
