import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// The routes and request forms Segment's and RudderStack's SDKs use besides `/v1/batch`: the
/// short paths, `text/plain` bodies with the write key inside, messages without a `messageId`,
/// `originalTimestamp`, CORS for pages, and the settings fetch.
struct SegmentRoutesTests {
    static func headers(_ pairs: [(HTTPField.Name, String)]) -> HTTPFields {
        var fields = HTTPFields()
        for (name, value) in pairs { fields[name] = value }
        return fields
    }

    @Test func theShortBatchPathIsTheBatchEndpoint() async throws {
        try await RouterHarness.run { client, services async throws in
            let body = TestMessages.batch([TestMessages.track("a", id: "b-1"), TestMessages.track("b", id: "b-2")])
            let response = try await client.execute(
                uri: "/v1/b", method: .post,
                headers: Self.headers([
                    (.authorization, TestMessages.basic(RouterHarness.writeKey)), (.contentType, "application/json"),
                ]), body: ByteBuffer(json: body))
            #expect(response.status == .ok)
            #expect(try response.json["accepted"] == 2)
            #expect(try await services.query.counts(source: "default").events == 2)
        }
    }

    @Test(arguments: MessageType.allCases)
    func eachShortSinglePathStoresItsType(type: MessageType) async throws {
        try await RouterHarness.run { client, services async throws in
            var message: [String: JSONValue] = [
                "messageId": .string("short-\(type.rawValue)"), "anonymousId": "a1", "event": "Clicked", "name": "Home",
                "writeKey": .string(RouterHarness.writeKey),
            ]
            if type == .alias { message["previousId"] = "old" }
            // As a browser sends it: the key in the body, text/plain so no preflight is needed.
            let response = try await client.execute(
                uri: "/v1/\(type.shortPath)", method: .post,
                headers: Self.headers([(.contentType, "text/plain")]),
                body: ByteBuffer(json: JSONValue.object(message).jsonBytes()))
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            let events = try await services.query.events(source: "default")
            #expect(events.items.map(\.type) == [type.rawValue])
            #expect(events.items.first?.messageId == "short-\(type.rawValue)")
            // The write key is a credential: not kept with the event.
            #expect(events.items.first?.message["writeKey"] == nil)
        }
    }

    @Test func aBodyIsJSONWhateverItsContentTypeSaysWithTheSameErrors() async throws {
        try await RouterHarness.run { client, _ async throws in
            for contentType in ["text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "nonsense"] {
                let broken = try await client.execute(
                    uri: "/v1/b", method: .post,
                    headers: Self.headers([
                        (.authorization, TestMessages.basic(RouterHarness.writeKey)), (.contentType, contentType),
                    ]), body: ByteBuffer(string: #"{"batch":[{"type":"track",}]}"#))
                #expect(broken.status == .badRequest)
                #expect(try broken.json["code"] == "invalid_json")
            }
        }
    }

    @Test func aMessageWithoutAMessageIdIsStoredUnderAGeneratedOneAndSaysItCannotBeDeduplicated() async throws {
        try await RouterHarness.run { client, services async throws in
            let message: JSONValue = .object(["type": "track", "event": "Opened", "anonymousId": "a1"])
            let body = ByteBuffer(json: TestMessages.batch([TestMessages.track("kept", id: "k-1"), message]))
            let first = try await client.execute(
                uri: "/v1/b", method: .post, headers: .basic(RouterHarness.writeKey), body: body)
            #expect(first.status == .ok)
            #expect(try first.json["accepted"] == 2)
            let generated = try #require(try first.json["generatedMessageIds"]?.arrayValue)
            #expect(generated.map { $0["index"] } == [1])
            let id = try #require(generated.first?["messageId"]?.stringValue)
            #expect(id.hasPrefix("generated-"))
            #expect(try first.json["warning"]?.stringValue?.contains("cannot be deduplicated") == true)
            let stored = try await services.query.events(source: "default").items
            #expect(Set(stored.map(\.messageId)) == ["k-1", id])

            // A retry stores the id-less message again (that is what "cannot be deduplicated" means);
            // the one with an id is a duplicate.
            let retry = try await client.execute(
                uri: "/v1/b", method: .post, headers: .basic(RouterHarness.writeKey), body: body)
            #expect(try retry.json["accepted"] == 1)
            #expect(try retry.json["duplicates"] == 1)
            #expect(try await services.query.counts(source: "default").events == 3)
            // Without id-less messages the answer carries no such members.
            let plain = try await client.execute(
                uri: "/v1/b", method: .post, headers: .basic(RouterHarness.writeKey),
                body: ByteBuffer(json: TestMessages.batch([TestMessages.track("x", id: "k-2")])))
            #expect(try plain.json["generatedMessageIds"] == nil)
            #expect(try plain.json["warning"] == nil)
        }
    }

    @Test func originalTimestampAndANumericSessionIdAreReadAsMeant() async throws {
        try await RouterHarness.run { client, services async throws in
            // RudderStack's shape: the device time as originalTimestamp (no timestamp), sentAt, and a
            // numeric context.sessionId.
            let body = #"""
                {"batch":[{"type":"track","event":"Viewed","messageId":"r-1","anonymousId":"a1",
                "originalTimestamp":"2026-01-01T10:00:00.123+02:00","sentAt":"2026-01-01T10:00:05.123+02:00",
                "context":{"sessionId":1767254400000}}],"sentAt":"2026-01-01T10:00:05.123+02:00"}
                """#
            let response = try await client.execute(
                uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey), body: ByteBuffer(string: body)
            )
            #expect(response.status == .ok)
            let event = try #require(try await services.query.events(source: "default").items.first)
            #expect(event.sessionId == "1767254400000")
            #expect(event.originalTimestamp == "2026-01-01T10:00:00.123+02:00")
            // Corrected by the device's clock skew: received at `receivedAt`, sent 5 s after the event.
            #expect(event.receivedAt.timeIntervalSince(event.timestamp) > 4.9)
            #expect(event.receivedAt.timeIntervalSince(event.timestamp) < 5.1)
        }
    }

    @Test func anUnreadableOriginalTimestampIsNamed() throws {
        let body = Array(
            #"{"batch":[{"type":"track","event":"e","messageId":"m","anonymousId":"a","originalTimestamp":"soon"}]}"#
                .utf8)
        let request = try BatchDecoder().decode(body, endpoint: .batch, receivedAt: 0)
        #expect(
            request.rejections.map(\.description) == [#"batch[0].originalTimestamp: not an ISO-8601 timestamp: "soon""#]
        )
    }

    // MARK: CORS

    @Test(arguments: ["/v1/b", "/v1/batch", "/v1/t", "/v1/track", "/v1/config/surveys", "/v1/projects/k/settings"])
    func aPreflightOnABrowserRouteIsAnswered(path: String) async throws {
        try await RouterHarness.run { client, _ async throws in
            let response = try await client.execute(
                uri: path, method: .options,
                headers: Self.headers([
                    (.origin, "https://shop.example.com"), (.accessControlRequestMethod, "POST"),
                    (.accessControlRequestHeaders, "content-type, authorization"),
                ]))
            #expect(response.status == .noContent)
            #expect(response.headers[.accessControlAllowOrigin] == "*")
            #expect(response.headers[.accessControlAllowMethods]?.contains("POST") == true)
            let allowed = response.headers[.accessControlAllowHeaders]?.lowercased() ?? ""
            #expect(allowed.contains("content-type") && allowed.contains("authorization"))
        }
    }

    @Test func ingestAnswersCarryCORSAndAdminRoutesNever() async throws {
        try await RouterHarness.run { client, _ async throws in
            let origin = Self.headers([
                (.origin, "https://shop.example.com"), (.authorization, TestMessages.basic(RouterHarness.writeKey)),
            ])
            let ok = try await client.execute(
                uri: "/v1/b", method: .post, headers: origin,
                body: ByteBuffer(json: TestMessages.batch([TestMessages.track("e", id: "c-1")])))
            #expect(ok.headers[.accessControlAllowOrigin] == "*")
            // Errors too, so the page can read why.
            let bad = try await client.execute(
                uri: "/v1/b", method: .post, headers: origin, body: ByteBuffer(string: "{"))
            #expect(bad.status == .badRequest)
            #expect(bad.headers[.accessControlAllowOrigin] == "*")

            var admin = Self.headers([(.origin, "https://shop.example.com")])
            admin[.authorization] = "Bearer \(RouterHarness.adminToken)"
            let query = try await client.execute(uri: "/v1/query/counts", method: .get, headers: admin)
            #expect(query.status == .ok)
            #expect(query.headers[.accessControlAllowOrigin] == nil)
            let preflight = try await client.execute(
                uri: "/v1/query/counts", method: .options,
                headers: Self.headers([(.origin, "https://shop.example.com"), (.accessControlRequestMethod, "GET")]))
            #expect(preflight.headers[.accessControlAllowOrigin] == nil)
            #expect(preflight.status != .noContent)
            let configWrite = try await client.execute(
                uri: "/v1/config/surveys", method: .options,
                headers: Self.headers([(.origin, "https://shop.example.com"), (.accessControlRequestMethod, "PUT")]))
            #expect(configWrite.headers[.accessControlAllowMethods]?.contains("PUT") == false)
        }
    }

    @Test func corsOriginsNarrowWhichPagesMayCall() async throws {
        try await RouterHarness.run(configure: { $0.corsOrigins = ["https://shop.example.com/"] }) { client, _ in
            let allowed = try await client.execute(
                uri: "/v1/b", method: .options,
                headers: Self.headers([(.origin, "https://SHOP.example.com"), (.accessControlRequestMethod, "POST")]))
            #expect(allowed.headers[.accessControlAllowOrigin] == "https://SHOP.example.com")
            #expect(allowed.headers[.vary] == "Origin")
            let other = try await client.execute(
                uri: "/v1/b", method: .options,
                headers: Self.headers([(.origin, "https://evil.example"), (.accessControlRequestMethod, "POST")]))
            #expect(other.headers[.accessControlAllowOrigin] == nil)
            let post = try await client.execute(
                uri: "/v1/b", method: .post,
                headers: Self.headers([
                    (.origin, "https://evil.example"), (.authorization, TestMessages.basic(RouterHarness.writeKey)),
                ]), body: ByteBuffer(json: TestMessages.batch([TestMessages.track("e", id: "n-1")])))
            #expect(post.headers[.accessControlAllowOrigin] == nil)
        }
    }

    // MARK: Settings

    @Test(arguments: ["/v1/projects", "/projects"])
    func theSettingsNameThisCollectorAsTheAPIHost(prefix: String) async throws {
        try await RouterHarness.run { client, _ async throws in
            // The test client names `localhost` as the request's authority (its Host).
            let response = try await client.execute(uri: "\(prefix)/\(RouterHarness.writeKey)/settings", method: .get)
            #expect(response.status == .ok)
            let segment = try #require(try response.json["integrations"]?["Segment.io"])
            #expect(segment["apiKey"]?.stringValue == RouterHarness.writeKey)
            #expect(segment["apiHost"]?.stringValue == "localhost/v1")
            #expect(response.headers[.cacheControl] == "max-age=60")

            let unknown = try await client.execute(uri: "\(prefix)/nope/settings", method: .get)
            #expect(unknown.status == .notFound)
            #expect(try unknown.json["error"]?.stringValue?.contains("writeKey") == true)
        }
    }

    @Test func theConfiguredPublicURLWinsOverTheHostHeader() async throws {
        try await RouterHarness.run(configure: { $0.publicURL = URL(string: "https://collector.example.com/edge/") }) {
            client, _ in
            let response = try await client.execute(
                uri: "/v1/projects/web-key/settings", method: .get)
            #expect(try response.json["integrations"]?["Segment.io"]?["apiHost"] == "collector.example.com/edge/v1")
            #expect(try response.json["integrations"]?["Segment.io"]?["apiKey"] == "web-key")
        }
    }

    @Test func onlySettingsPathsAreRecognised() {
        #expect(SettingsRoutes.writeKey(inPath: "/v1/projects/abc/settings") == "abc")
        #expect(SettingsRoutes.writeKey(inPath: "/projects/abc/settings") == "abc")
        #expect(SettingsRoutes.writeKey(inPath: "/v1/projects//settings") == nil)
        #expect(SettingsRoutes.writeKey(inPath: "/v2/projects/abc/settings") == nil)
        #expect(SettingsRoutes.writeKey(inPath: "/v1/projects/abc/settings/x") == nil)
        #expect(SettingsRoutes.writeKey(inPath: "/v1/query/counts") == nil)
    }
}
