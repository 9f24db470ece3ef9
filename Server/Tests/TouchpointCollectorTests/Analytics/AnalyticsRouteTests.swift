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

    /// Stickiness, lifecycle and active people over HTTP, in the source's time zone: a1 opens at
    /// 23:30 UTC on 1 January, which is 2 January in Tokyo, then signs in as u1 and opens again on
    /// 3 January (Tokyo), so u1 is one person on two days; a9 opens on 3 January only.
    @Test func stickinessLifecycleAndActivePeopleAnswerInTheSourcesZone() async throws {
        try await RouterHarness.run(configure: { $0.timeZone = "Asia/Tokyo" }) { client, _ async throws in
            let day = 86_400.0
            let messages: [JSONValue] = [
                TestMessages.track("open", id: "o1", session: "s1", anonymous: "a1", at: 23.5 * 3600),
                .object([
                    "type": "identify", "messageId": "i1", "userId": "u1", "anonymousId": "a1",
                    "timestamp": .string(Timestamp.format(TestMessages.base.addingTimeInterval(23.6 * 3600))),
                ]),
                TestMessages.track("open", id: "o2", session: "s2", user: "u1", at: day + 23.5 * 3600),
                TestMessages.track("open", id: "o3", session: "s3", anonymous: "a9", at: 2 * day + 3600),
            ]
            let stored = try await client.execute(
                uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey),
                body: ByteBuffer(json: TestMessages.batch(messages)))
            #expect(try stored.json["accepted"] == 4)
            let range = "from=2026-01-01T15:00:00Z&to=2026-01-04T15:00:00Z"  // 2–4 January in Tokyo

            let sticky = try await Self.get(client, "/v1/query/stickiness?event=open&interval=month&\(range)")
            #expect(sticky.status == .ok)
            #expect(try sticky.json["timeZone"] == "Asia/Tokyo")
            #expect(try sticky.json["partial"] == false)
            #expect(try sticky.json["intervals"]?[0]?["start"] == "2025-12-31T15:00:00.000Z")
            #expect(try sticky.json["intervals"]?[0]?["days"]?[0]?["people"] == 1)  // a9 on one day
            #expect(try sticky.json["intervals"]?[0]?["days"]?[1]?["people"] == 1)  // u1 (with a1) on two
            #expect(try sticky.json["intervals"]?[0]?["total"] == 2)

            let lifecycle = try await Self.get(client, "/v1/query/lifecycle?event=open&interval=day&\(range)")
            #expect(lifecycle.status == .ok)
            let days = try #require(try lifecycle.json["intervals"]?.arrayValue)
            let lifecycleJSON = try lifecycle.json
            #expect(days.count == 3, "\(lifecycleJSON)")
            #expect(days[0]["start"] == "2026-01-01T15:00:00.000Z")
            #expect(days[0]["new"] == 1 && days[0]["returning"] == 0)  // u1, as a1
            #expect(days[1]["returning"] == 1 && days[1]["new"] == 1)  // u1 again, a9 new
            #expect(days[2]["dormant"] == 2 && days[2]["new"] == 0)  // both gone

            let active = try await Self.get(client, "/v1/query/trends?event=open&interval=day&math=wau&\(range)")
            let activeJSON = try active.json
            #expect(active.status == .ok, "\(activeJSON)")
            #expect(try active.json["totals"]?.arrayValue?.compactMap { $0["active"]?.intValue } == [1, 2, 2])
        }
    }

    @Test(arguments: [
        ("/v1/query/stickiness?event=open&interval=day", "interval"),
        ("/v1/query/stickiness?interval=week", "event"),
        ("/v1/query/lifecycle?event=open&interval=hour", "interval"),
        ("/v1/query/lifecycle?event=open&from=yesterday", "from"),
        ("/v1/query/trends?event=open&math=yau", "math"),
        ("/v1/query/trends?event=open&interval=hour&math=dau", "math"),
    ])
    func badPeopleInsightParametersAreNamed(uri: String, parameter: String) async throws {
        try await RouterHarness.run { client, _ async throws in
            let response = try await Self.get(client, uri)
            #expect(response.status == .badRequest, "\(uri)")
            #expect(try response.json["path"]?.stringValue == parameter, "\(uri)")
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
