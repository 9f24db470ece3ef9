import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// The analytics endpoints over HTTP: what a dashboard or a script sees.
struct AnalyticsRouteTests {
    static func seed(_ client: any TestClientProtocol, count: Int = 0) async throws {
        var messages: [JSONValue] = [
            TestMessages.track("open", id: "o1", session: "s1", anonymous: "a1", at: 10),
            .object([
                "type": "identify", "messageId": "i1", "userId": "u1", "anonymousId": "a1",
                "traits": ["email": "ada@example.com", "plan": "pro"],
                "timestamp": .string(Timestamp.format(TestMessages.base.addingTimeInterval(20))),
            ]),
            TestMessages.track(
                "buy", id: "b1", session: "s1", user: "u1", anonymous: "a1", at: 30, properties: ["plan": "pro"]),
        ]
        for index in 0..<count {
            messages.append(
                TestMessages.track("tick", id: "t\(index)", session: "s2", anonymous: "a2", at: Double(40 + index)))
        }
        let response = try await client.execute(
            uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey),
            body: ByteBuffer(json: TestMessages.batch(messages)))
        #expect(try response.json["accepted"] == .int(messages.count))
    }

    static func get(_ client: any TestClientProtocol, _ uri: String) async throws -> TestResponse {
        try await client.execute(uri: uri, method: .get, headers: .bearer(RouterHarness.adminToken))
    }

    static let range = "from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z"

    @Test func peopleAndAPersonPage() async throws {
        try await RouterHarness.run { client, _ async throws in
            try await Self.seed(client)
            let list = try await Self.get(client, "/v1/query/users?search=example.com")
            #expect(list.status == .ok)
            #expect(try list.json["items"]?[0]?["userId"] == "u1")
            #expect(try list.json["items"]?[0]?["traits"]?["email"] == "ada@example.com")
            let person = try await Self.get(client, "/v1/query/users/u1")
            #expect(try person.json["anonymousIds"] == ["a1"])
            #expect(try person.json["sessions"]?[0]?["sessionId"] == "s1")
            #expect(try person.json["recentEvents"]?.arrayValue?.count == 2)  // the identify call had no session
            let missing = try await Self.get(client, "/v1/query/users/nobody")
            #expect(missing.status == .notFound)
        }
    }

    @Test func trendsFunnelsAndRetentionAnswerAsJSON() async throws {
        try await RouterHarness.run { client, _ async throws in
            try await Self.seed(client)
            let trend = try await Self.get(
                client, "/v1/query/trends?event=buy&interval=hour&breakdown=plan&\(Self.range)")
            #expect(trend.status == .ok)
            #expect(try trend.json["totals"]?.arrayValue?.count == 24)
            #expect(try trend.json["totals"]?[0]?["count"] == 1)
            #expect(try trend.json["series"]?[0]?["value"] == "pro")
            let funnel = try await Self.get(client, "/v1/query/funnel?steps=open,buy[plan=pro]&window=1h&\(Self.range)")
            #expect(try funnel.json["steps"]?[1]?["users"] == 1)  // a1's open counts for u1
            #expect(try funnel.json["steps"]?[1]?["medianSecondsFromPrevious"]?.doubleValue == 20)
            let retention = try await Self.get(client, "/v1/query/retention?start=open&return=buy&\(Self.range)")
            #expect(retention.status == .ok)
            #expect(try retention.json["cohorts"]?[0]?["size"] == 1)
        }
    }

    @Test(arguments: [
        ("/v1/query/trends?interval=day", "event"),
        ("/v1/query/trends?event=buy&interval=fortnight", "interval"),
        ("/v1/query/trends?event=buy&breakdown=plan%27--", "breakdown"),
        ("/v1/query/funnel?steps=open", "steps"),
        ("/v1/query/funnel?steps=open,buy&window=soon", "window"),
        ("/v1/query/retention?start=open&interval=hour", "interval"),
        ("/v1/query/export?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", "from"),
    ])
    func badParametersAre400sThatNameThem(uri: String, parameter: String) async throws {
        try await RouterHarness.run { client, _ async throws in
            let response = try await Self.get(client, uri)
            #expect(response.status == .badRequest)
            #expect(try response.json["code"] == "invalid_parameter")
            #expect(try response.json["path"] == .string(parameter))
        }
    }

    @Test func theExportStreamsEveryEventOfTheRangeAsNDJSON() async throws {
        try await RouterHarness.run { client, _ async throws in
            // More than one page of 1,000.
            try await Self.seed(client, count: 2_400)
            let response = try await Self.get(client, "/v1/query/export?\(Self.range)")
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/x-ndjson; charset=utf-8")
            let lines = String(buffer: response.body).split(separator: "\n")
            #expect(lines.count == 2_403)
            var ids = Set<String>()
            for line in lines {
                let value = try JSONParser.parse(String(line))
                if let id = value["message"]?["messageId"]?.stringValue { ids.insert(id) }
                #expect(value["receivedAt"] != nil)
            }
            #expect(ids.count == 2_403)
            // The message as it was received: identify traits included.
            let identify = try #require(lines.first { $0.contains("\"i1\"") })
            #expect(try JSONParser.parse(String(identify))["message"]?["traits"]?["plan"] == "pro")
            let narrow = try await Self.get(
                client, "/v1/query/export?from=2026-01-01T00:00:25Z&to=2026-01-01T00:00:41Z")
            #expect(String(buffer: narrow.body).split(separator: "\n").count == 2)  // b1 and t0
        }
    }
}
