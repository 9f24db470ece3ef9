import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TouchpointCore

@testable import TouchpointCollector

struct IngestRouteTests {
    @Test func storesABatchOnceAcrossRetries() async throws {
        try await RouterHarness.run { client, services async throws in
            let body = TestMessages.batch((0..<5).map { TestMessages.track("e\($0)", id: "m\($0)") })
            let first = try await client.execute(
                uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey), body: ByteBuffer(json: body))
            #expect(first.status == .ok)
            #expect(try first.json["success"] == true)
            #expect(try first.json["accepted"] == 5)
            #expect(try first.json["duplicates"] == 0)
            let retry = try await client.execute(
                uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey), body: ByteBuffer(json: body))
            #expect(try retry.json["accepted"] == 0)
            #expect(try retry.json["duplicates"] == 5)
            #expect(try await services.query.counts(source: "default").events == 5)
        }
    }

    @Test func refusesRequestsWithoutAKnownWriteKey() async throws {
        try await RouterHarness.run { client, services async throws in
            let body = ByteBuffer(json: TestMessages.batch([TestMessages.track("e")]))
            let none = try await client.execute(uri: "/v1/batch", method: .post, body: body)
            #expect(none.status == .unauthorized)
            #expect(try none.json["code"] == "unauthorized")
            let wrong = try await client.execute(uri: "/v1/batch", method: .post, headers: .basic("nope"), body: body)
            #expect(wrong.status == .unauthorized)
            let bearer = try await client.execute(
                uri: "/v1/batch", method: .post, headers: .bearer(RouterHarness.writeKey), body: body)
            #expect(bearer.status == .unauthorized)
            let wrongInBody = try await client.execute(
                uri: "/v1/batch", method: .post,
                body: ByteBuffer(json: TestMessages.batch([TestMessages.track("e")], writeKey: "nope")))
            #expect(wrongInBody.status == .unauthorized)
            #expect(try await services.query.counts(source: "default").events == 0)
        }
    }

    @Test func takesTheWriteKeyFromTheBodyAndSeparatesSources() async throws {
        try await RouterHarness.run { client, services async throws in
            let response = try await client.execute(
                uri: "/v1/batch", method: .post,
                body: ByteBuffer(json: TestMessages.batch([TestMessages.track("e", id: "x")], writeKey: "web-key")))
            #expect(response.status == .ok)
            #expect(try await services.query.counts(source: "web").events == 1)
            #expect(try await services.query.counts(source: "default").events == 0)
        }
    }

    @Test func keepsTheGoodEventsOfABatchWithABadOne() async throws {
        try await RouterHarness.run { client, services async throws in
            var messages = (0..<20).map { TestMessages.track("e", id: "m\($0)") }
            messages[17] = .object(["type": "track", "messageId": "m17", "anonymousId": "a"])
            let response = try await client.execute(
                uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey),
                body: ByteBuffer(json: TestMessages.batch(messages)))
            #expect(response.status == .ok)
            #expect(try response.json["accepted"] == 19)
            let rejected = try #require(try response.json["rejected"]?.arrayValue)
            #expect(rejected.count == 1)
            #expect(rejected.first?["index"] == 17)
            #expect(rejected.first?["error"] == "batch[17].event: missing")
            #expect(try await services.query.counts(source: "default").events == 19)
        }
    }

    @Test func answersMalformedBodiesWithWhatAndWhere() async throws {
        try await RouterHarness.run { client, _ async throws in
            let broken = try await client.execute(
                uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey),
                body: ByteBuffer(string: #"{"batch":[{"type":"track",}]}"#))
            #expect(broken.status == .badRequest)
            #expect(try broken.json["code"] == "invalid_json")
            #expect(try broken.json["error"]?.stringValue?.contains("at byte 26") == true)

            let shape = try await client.execute(
                uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey),
                body: ByteBuffer(string: #"{"batch":"all of them"}"#))
            #expect(shape.status == .badRequest)
            #expect(try shape.json["path"] == "batch")
            #expect(try shape.json["error"] == "batch: expected an array, found string")
        }
    }

    @Test func enforcesTheRequestAndBatchLimits() async throws {
        try await RouterHarness.run { client, services async throws in
            let huge = ByteBuffer(repeating: UInt8(ascii: " "), count: 600 * 1024)
            let tooLarge = try await client.execute(
                uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey), body: huge)
            #expect(tooLarge.status == .contentTooLarge)
            #expect(try tooLarge.json["code"] == "payload_too_large")

            let many = (0..<2501).map { _ in JSONValue.object([:]) }
            let tooMany = try await client.execute(
                uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey),
                body: ByteBuffer(json: TestMessages.batch(many)))
            #expect(tooMany.status == .badRequest)
            #expect(try tooMany.json["code"] == "too_many_events")
            #expect(try await services.query.counts(source: "default").events == 0)
        }
    }

    @Test func acceptsGzipBodies() async throws {
        try await RouterHarness.run { client, services async throws in
            let body = TestMessages.batch((0..<50).map { TestMessages.track("e", id: "g\($0)") })
            var headers = HTTPFields.basic(RouterHarness.writeKey)
            headers[.contentEncoding] = "gzip"
            let response = try await client.execute(
                uri: "/v1/batch", method: .post, headers: headers, body: ByteBuffer(bytes: try Gzip.compress(body)))
            #expect(response.status == .ok)
            #expect(try response.json["accepted"] == 50)

            // 1 MB of spaces compresses to a few KB but inflates past the limit.
            var bomb = Array(#"{"batch":["#.utf8)
            bomb += [UInt8](repeating: UInt8(ascii: " "), count: 1024 * 1024)
            let bombed = try await client.execute(
                uri: "/v1/batch", method: .post, headers: headers, body: ByteBuffer(bytes: try Gzip.compress(bomb)))
            #expect(bombed.status == .contentTooLarge)

            headers[.contentEncoding] = "br"
            let brotli = try await client.execute(
                uri: "/v1/batch", method: .post, headers: headers, body: ByteBuffer(json: body))
            #expect(brotli.status == .unsupportedMediaType)
            #expect(try await services.query.counts(source: "default").events == 50)
        }
    }

    @Test(arguments: MessageType.allCases)
    func acceptsEachSingleMessageEndpoint(type: MessageType) async throws {
        try await RouterHarness.run { client, services async throws in
            var message: [String: JSONValue] = ["messageId": "single-1", "userId": "u1", "event": "Signed Up"]
            if type == .alias { message["previousId"] = "old" }
            let response = try await client.execute(
                uri: "/v1/\(type.rawValue)", method: .post, headers: .basic(RouterHarness.writeKey),
                body: ByteBuffer(json: JSONValue.object(message).jsonBytes()))
            #expect(response.status == .ok)
            #expect(try response.json["accepted"] == 1)
            let events = try await services.query.events(source: "default")
            #expect(events.items.map(\.type) == [type.rawValue])

            let invalid = try await client.execute(
                uri: "/v1/\(type.rawValue)", method: .post, headers: .basic(RouterHarness.writeKey),
                body: ByteBuffer(string: #"{"messageId":"single-2","event":"x"}"#))
            #expect(invalid.status == .badRequest)
            let error = try invalid.json["error"]?.stringValue ?? ""
            #expect(error.hasSuffix("needs a userId or an anonymousId"), "\(error)")
        }
    }
}
