import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// Requests as Segment's and RudderStack's SDKs put them on the wire, written down as data from
/// reading each SDK's source (paths, headers, content types, body layout; the values are made up):
///
/// - analytics-swift (`HTTPClient`, `DirectoryStore`): `POST https://{apiHost}/b`, `Content-Type:
///   application/json; charset=utf-8`, `User-Agent: analytics-ios/…`, no `Authorization`; the body is
///   its batch file, `{ "batch": [` then one event per line, then `],"sentAt":…,"writeKey":…}`.
/// - analytics-kotlin (`HTTPClient`, `EventsFileManager`): `POST https://{apiHost}/b`, `Content-Type:
///   text/plain`, `Content-Encoding: gzip`, chunked, no `Authorization`; `{"batch":[…],"sentAt":…,"writeKey":…}`.
/// - analytics.js (`segmentio` plugin): single calls to `{protocol}://{apiHost}/{t,i,p,g,a,s}` with
///   `Content-Type: text/plain` and the write key in the body; batching mode posts
///   `{"writeKey":…,"batch":[…],"sentAt":…}` to `/b`, each event still carrying its `writeKey` and
///   `_metadata`.
/// - RudderStack: `POST {dataPlaneUrl}/v1/batch` with Basic auth; events carry `originalTimestamp`
///   and `sentAt` (no `timestamp`), a numeric `context.sessionId`, `channel`.
/// - Settings: `GET https://{cdnHost}/projects/{writeKey}/settings` (mobile; cdnHost defaults to
///   `cdn-settings.segment.com/v1`), `{cdnURL}/v1/projects/{writeKey}/settings` (analytics.js).
struct SDKRequestShapesTests {
    static let writeKey = RouterHarness.writeKey

    static func headers(_ pairs: [(String, String)]) -> HTTPFields {
        var fields = HTTPFields()
        for (name, value) in pairs { fields[HTTPField.Name(name)!] = value }
        return fields
    }

    static let analyticsSwiftBody = """
        { "batch": [
        {"type":"track","event":"Item Purchased","properties":{"price":9.99,"sku":"A-1"},"messageId":"6F2A1C3E-7B7D-4C0B-9A1D-5D2E1F0A9B11","anonymousId":"0E5C5B0C-1111-4F7B-8F4A-2B0E6C1D2E3F","userId":"u-42","timestamp":"2026-01-01T10:00:00.123Z","integrations":{},"context":{"app":{"name":"Shop","version":"2.1","build":"210","namespace":"com.example.shop"},"device":{"manufacturer":"Apple","type":"ios","model":"iPhone15,2","id":"D-1"},"os":{"name":"iOS","version":"17.4"},"screen":{"width":393,"height":852},"network":{"wifi":true,"cellular":false},"locale":"en-US","timezone":"Europe/Berlin","library":{"name":"analytics-swift","version":"1.7.0"},"instanceId":"I-1"},"_metadata":{"bundled":[],"unbundled":[],"bundledIds":[]}}
        ,{"type":"screen","name":"Home","properties":{},"messageId":"6F2A1C3E-7B7D-4C0B-9A1D-5D2E1F0A9B12","anonymousId":"0E5C5B0C-1111-4F7B-8F4A-2B0E6C1D2E3F","userId":"u-42","timestamp":"2026-01-01T10:00:01.456Z","integrations":{},"context":{"library":{"name":"analytics-swift","version":"1.7.0"}}}
        ],"sentAt":"2026-01-01T10:00:05.000Z","writeKey":"\(writeKey)"}
        """

    @Test func analyticsSwiftsBatchFile() async throws {
        try await RouterHarness.run { client, services async throws in
            let response = try await client.execute(
                uri: "/v1/b", method: .post,
                headers: Self.headers([
                    ("Content-Type", "application/json; charset=utf-8"), ("User-Agent", "analytics-ios/1.7.0"),
                    ("Accept-Encoding", "gzip"),
                ]), body: ByteBuffer(string: Self.analyticsSwiftBody))
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            #expect(try response.json["accepted"] == 2)
            let events = try await services.query.events(source: "default").items
            let purchase = try #require(events.first { $0.name == "Item Purchased" })
            #expect(purchase.userId == "u-42")
            #expect(purchase.message["properties"]?["price"] == 9.99)
            #expect(purchase.message["context"]?["device"]?["model"] == "iPhone15,2")
            #expect(purchase.message["writeKey"] == nil)
            #expect(events.contains { $0.type == "screen" && $0.name == "Home" })
        }
    }

    @Test func analyticsKotlinsGzippedTextPlainBatch() async throws {
        let body = """
            {"batch":[{"type":"track","event":"Order Completed","properties":{"total":30},"messageId":"a1b2c3d4-0000-4000-8000-000000000001","anonymousId":"an-1","integrations":{},"context":{"app":{"name":"Shop","version":"2.1","namespace":"com.example.shop","build":"210"},"device":{"manufacturer":"Google","model":"Pixel 8","type":"android"},"os":{"name":"Android","version":"14"},"library":{"name":"analytics-kotlin","version":"1.16.0"},"locale":"en-US","timezone":"America/New_York","network":{"wifi":true},"screen":{"density":2.6,"width":1080,"height":2400},"instanceId":"K-1"},"timestamp":"2026-01-01T10:00:00.000Z","_metadata":{"bundled":[],"unbundled":[],"bundledIds":[]}}],"sentAt":"2026-01-01T10:00:02.000Z","writeKey":"\(Self.writeKey)"}
            """
        let compressed = try Gzip.compress(Array(body.utf8))
        try await RouterHarness.run { client, services async throws in
            let response = try await client.execute(
                uri: "/v1/b", method: .post,
                headers: Self.headers([
                    ("Content-Type", "text/plain"), ("Content-Encoding", "gzip"),
                    ("User-Agent", "analytics-kotlin/1.16.0"),
                ]), body: ByteBuffer(bytes: compressed))
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            let events = try await services.query.events(source: "default").items
            #expect(events.map(\.name) == ["Order Completed"])
        }
    }

    @Test func analyticsJSsBatchingModeAndSingleCalls() async throws {
        let batch = """
            {"writeKey":"\(Self.writeKey)","batch":[{"type":"page","properties":{"path":"/","url":"https://shop.example.com/"},"name":null,"context":{"page":{"path":"/"},"userAgent":"Mozilla/5.0","locale":"en-US","library":{"name":"analytics.js","version":"next-1.70.0"}},"anonymousId":"ajs-anon","timestamp":"2026-01-01T10:00:00.000Z","integrations":{},"messageId":"ajs-next-1767261600000-0001","writeKey":"\(Self.writeKey)","userId":null,"_metadata":{"bundled":["Segment.io"],"unbundled":[],"bundledIds":[],"retryCount":1}}],"sentAt":"2026-01-01T10:00:00.500Z"}
            """
        let single = """
            {"type":"identify","traits":{"email":"a@example.com"},"userId":"u-7","anonymousId":"ajs-anon","context":{"library":{"name":"analytics.js","version":"next-1.70.0"}},"timestamp":"2026-01-01T10:00:01.000Z","integrations":{},"messageId":"ajs-next-1767261601000-0002","writeKey":"\(Self.writeKey)","sentAt":"2026-01-01T10:00:01.100Z","_metadata":{"bundled":["Segment.io"],"unbundled":[],"bundledIds":[]}}
            """
        try await RouterHarness.run { client, services async throws in
            let text = Self.headers([("Content-Type", "text/plain")])
            let first = try await client.execute(
                uri: "/v1/b", method: .post, headers: text, body: ByteBuffer(string: batch))
            #expect(first.status == .ok, "\(String(buffer: first.body))")
            let second = try await client.execute(
                uri: "/v1/i", method: .post, headers: text, body: ByteBuffer(string: single))
            #expect(second.status == .ok, "\(String(buffer: second.body))")
            let events = try await services.query.events(source: "default").items
            #expect(Set(events.map(\.type)) == ["page", "identify"])
            #expect(events.first { $0.type == "identify" }?.userId == "u-7")
        }
    }

    @Test func rudderStacksBatch() async throws {
        let body = """
            {"batch":[{"type":"track","event":"Product Viewed","properties":{"id":"p-1"},"messageId":"1767261600000-9e9a4a3c-aaaa-4bbb-8ccc-111111111111","anonymousId":"rs-anon","channel":"mobile","originalTimestamp":"2026-01-01T10:00:00.000Z","sentAt":"2026-01-01T10:00:03.000Z","context":{"sessionId":1767261590000,"sessionStart":true,"library":{"name":"com.rudderstack.android.sdk.core","version":"1.20.0"},"traits":{"anonymousId":"rs-anon"}},"integrations":{"All":true}}],"sentAt":"2026-01-01T10:00:03.000Z"}
            """
        try await RouterHarness.run { client, services async throws in
            let response = try await client.execute(
                uri: "/v1/batch", method: .post,
                headers: Self.headers([
                    ("Content-Type", "application/json; charset=utf-8"),
                    ("Authorization", TestMessages.basic(Self.writeKey)),
                ]), body: ByteBuffer(string: body))
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            let event = try #require(try await services.query.events(source: "default").items.first)
            #expect(event.sessionId == "1767261590000")
            #expect(event.originalTimestamp == "2026-01-01T10:00:00.000Z")
        }
    }

    @Test func theSettingsEachSDKReads() async throws {
        try await RouterHarness.run { client, _ async throws in
            // analytics-swift and -kotlin: cdnHost "collector.example.com/v1" + "/projects/…/settings";
            // analytics.js: cdnURL + "/v1/projects/…/settings" — the same path.
            let response = try await client.execute(
                uri: "/v1/projects/\(Self.writeKey)/settings", method: .get,
                headers: Self.headers([
                    ("Content-Type", "application/json; charset=utf-8"), ("X-Forwarded-Proto", "https"),
                ]))
            #expect(response.status == .ok)
            let settings = try response.json
            let segment = try #require(settings["integrations"]?["Segment.io"])
            #expect(segment["apiKey"]?.stringValue == Self.writeKey)
            #expect(segment["apiHost"]?.stringValue?.hasSuffix("/v1") == true)
            #expect(segment["protocol"] == "https")
            // What the SDKs' settings readers expect to find, each an object or array.
            #expect(settings["plan"]?.objectValue != nil)
            #expect(settings["edgeFunction"]?.objectValue != nil)
            #expect(settings["middlewareSettings"]?.objectValue != nil)
            #expect(settings["remotePlugins"]?.arrayValue?.isEmpty == true)
            #expect(segment["unbundledIntegrations"]?.arrayValue != nil)
        }
    }
}
