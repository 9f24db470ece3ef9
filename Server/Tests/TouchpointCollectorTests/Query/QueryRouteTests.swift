import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TouchpointCore

@testable import TouchpointCollector

struct QueryRouteTests {
    static func seed(_ client: any TestClientProtocol) async throws {
        var messages: [JSONValue] = []
        for index in 0..<6 {
            messages.append(
                TestMessages.track("screen_viewed", id: "v\(index)", session: "s1", user: "u1", at: Double(index)))
        }
        messages.append(TestMessages.track("tap", id: "t1", session: "s2", user: "u1", at: 100))
        messages.append(TestMessages.track("tap", id: "t2", session: "s3", anonymous: "anon-9", at: 200))
        messages.append(
            TestMessages.track("survey_presented", session: "s1", properties: ["id": "rate", "responseType": "choice"]))
        messages.append(
            TestMessages.track(
                "survey_response", session: "s1", properties: ["id": "rate", "type": "choice", "option": "4"]))
        messages.append(
            TestMessages.track(
                "survey_response", session: "s1", at: 7, properties: ["id": "rate", "type": "text", "text": "Nice"]))
        messages.append(
            TestMessages.track(
                "promo_impression", session: "s1", properties: ["appID": "notes", "currentAppID": "mail"]))
        messages.append(
            TestMessages.track(
                "promo_impression", session: "s1", properties: ["appID": "notes", "currentAppID": "mail"]))
        messages.append(
            TestMessages.track("promo_tap", session: "s1", properties: ["appID": "notes", "currentAppID": "mail"]))
        let response = try await client.execute(
            uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey),
            body: ByteBuffer(json: TestMessages.batch(messages)))
        #expect(try response.json["accepted"] == .int(messages.count))
    }

    @Test func needsTheAdminToken() async throws {
        try await RouterHarness.run { client, _ async throws in
            for uri in [
                "/v1/query/sessions", "/v1/query/events", "/v1/query/surveys", "/v1/query/promos", "/v1/query/counts",
            ] {
                #expect(try await client.execute(uri: uri, method: .get).status == .unauthorized)
                #expect(
                    try await client.execute(uri: uri, method: .get, headers: .bearer("wrong")).status == .unauthorized)
                #expect(
                    try await client.execute(uri: uri, method: .get, headers: .basic(RouterHarness.writeKey)).status
                        == .unauthorized)
            }
        }
    }

    @Test func pathParametersArePercentDecoded() async throws {
        try await RouterHarness.run { client, _ async throws in
            let messages = [TestMessages.track("tap", id: "space-1", session: "checkout flow/2")]
            _ = try await client.execute(
                uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey),
                body: ByteBuffer(json: TestMessages.batch(messages)))
            let events = try await client.execute(
                uri: "/v1/query/sessions/checkout%20flow%2F2/events", method: .get,
                headers: .bearer(RouterHarness.adminToken))
            #expect(events.status == .ok)
            #expect(try events.json["items"]?.arrayValue?.compactMap { $0["messageId"]?.stringValue } == ["space-1"])
        }
    }

    @Test func listsSessionsByUserAndTheirEventsInPages() async throws {
        try await RouterHarness.run { client, _ async throws in
            try await Self.seed(client)
            let admin = HTTPFields.bearer(RouterHarness.adminToken)
            let sessions = try await client.execute(uri: "/v1/query/sessions?userId=u1", method: .get, headers: admin)
            #expect(sessions.status == .ok)
            #expect(
                try sessions.json["items"]?.arrayValue?.compactMap { $0["sessionId"]?.stringValue } == ["s2", "s1"])

            let anonymous = try await client.execute(
                uri: "/v1/query/sessions?anonymousId=anon-9", method: .get, headers: admin)
            #expect(try anonymous.json["items"]?[0]?["sessionId"] == "s3")

            let firstPage = try await client.execute(
                uri: "/v1/query/sessions/s1/events?limit=4", method: .get, headers: admin)
            let firstItems = try #require(try firstPage.json["items"]?.arrayValue)
            #expect(firstItems.count == 4)
            let cursor = try #require(try firstPage.json["nextCursor"]?.stringValue)
            let secondPage = try await client.execute(
                uri: "/v1/query/sessions/s1/events?limit=100&cursor=\(cursor)", method: .get, headers: admin)
            let secondItems = try #require(try secondPage.json["items"]?.arrayValue)
            #expect(firstItems.count + secondItems.count == 12)
            #expect(try secondPage.json["nextCursor"] == .null)
            #expect(firstItems.first?["properties"] != nil)
            #expect(firstItems.first?["context"]?["sessionId"] == "s1")
        }
    }

    @Test func findsEventsByNameAndTimeRange() async throws {
        try await RouterHarness.run { client, _ async throws in
            try await Self.seed(client)
            let admin = HTTPFields.bearer(RouterHarness.adminToken)
            let from = Timestamp.format(TestMessages.base.addingTimeInterval(2))
            let to = Timestamp.format(TestMessages.base.addingTimeInterval(5))
            let response = try await client.execute(
                uri: "/v1/query/events?name=screen_viewed&from=\(from)&to=\(to)", method: .get, headers: admin)
            #expect(response.status == .ok)
            #expect(
                try response.json["items"]?.arrayValue?.compactMap { $0["messageId"]?.stringValue } == [
                    "v2", "v3", "v4",
                ])

            let badTime = try await client.execute(uri: "/v1/query/events?from=yesterday", method: .get, headers: admin)
            #expect(badTime.status == .badRequest)
            #expect(try badTime.json["path"] == "from")
            let badLimit = try await client.execute(uri: "/v1/query/events?limit=0", method: .get, headers: admin)
            #expect(badLimit.status == .badRequest)
            let badCursor = try await client.execute(uri: "/v1/query/events?cursor=abc", method: .get, headers: admin)
            #expect(badCursor.status == .badRequest)
            #expect(try badCursor.json["code"] == "invalid_parameter")
        }
    }

    @Test func activityCountsEventsPerMinuteOverAtMostAWeek() async throws {
        try await RouterHarness.run { client, _ async throws in
            try await Self.seed(client)
            let week = try await client.execute(
                uri: "/v1/query/activity?from=2025-12-25T00:00:00Z&to=2026-01-01T00:05:00Z", method: .get,
                headers: .bearer(RouterHarness.adminToken))
            #expect(week.status == .badRequest)  // a week and five minutes
            #expect(try week.json["path"] == "from")
            let answered = try await client.execute(
                uri: "/v1/query/activity?from=2025-12-25T00:05:00Z&to=2026-01-01T00:05:00Z", method: .get,
                headers: .bearer(RouterHarness.adminToken))
            #expect(answered.status == .ok)
            let items = try #require(try answered.json["items"]?.arrayValue)
            // The seeded events fall in the first minutes of 2026; every one is counted.
            #expect(items.compactMap { $0["events"]?.intValue }.reduce(0, +) == 14)
            #expect(items.first?["minute"] == "2026-01-01T00:00:00.000Z")
        }
    }

    @Test func reportsSurveyAndPromoResults() async throws {
        try await RouterHarness.run { client, _ async throws in
            try await Self.seed(client)
            let admin = HTTPFields.bearer(RouterHarness.adminToken)
            let surveys = try await client.execute(uri: "/v1/query/surveys", method: .get, headers: admin)
            let rate = try #require(try surveys.json["items"]?[0])
            #expect(rate["surveyId"] == "rate")
            #expect(rate["presented"] == 1)
            #expect(rate["responded"] == 2)
            #expect(rate["choices"] == ["4": 1])
            #expect(rate["textAnswers"] == 1)

            let answers = try await client.execute(uri: "/v1/query/surveys/rate/answers", method: .get, headers: admin)
            #expect(try answers.json["items"]?[0]?["text"] == "Nice")

            let promos = try await client.execute(uri: "/v1/query/promos", method: .get, headers: admin)
            let notes = try #require(try promos.json["items"]?[0])
            #expect(notes["appID"] == "notes")
            #expect(notes["impressions"] == 2)
            #expect(notes["taps"] == 1)
            #expect(notes["clickThrough"] == 0.5)
            #expect(notes["byPromotingApp"]?["mail"]?["taps"] == 1)

            let counts = try await client.execute(uri: "/v1/query/counts", method: .get, headers: admin)
            #expect(try counts.json["events"] == 14)
            #expect(try counts.json["sessions"] == 3)
        }
    }
}

struct OperationsRouteTests {
    @Test func reportsHealthAndPrometheusMetrics() async throws {
        try await RouterHarness.run { client, _ async throws in
            let health = try await client.execute(uri: "/health", method: .get)
            #expect(health.status == .ok)
            #expect(try health.json["storage"] == "sqlite")

            var messages = (0..<3).map { TestMessages.track("e", id: "m\($0)") }
            messages.append(.object(["type": "track"]))
            let body = ByteBuffer(json: TestMessages.batch(messages))
            _ = try await client.execute(
                uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey), body: body)
            _ = try await client.execute(
                uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey), body: body)
            _ = try await client.execute(uri: "/v1/batch", method: .post, body: body)

            let metrics = try await client.execute(uri: "/metrics", method: .get)
            let text = String(buffer: metrics.body)
            #expect(metrics.headers[.contentType]?.hasPrefix("text/plain") == true)
            #expect(text.contains("touchpoint_events_accepted_total 3\n"))
            #expect(text.contains("touchpoint_events_rejected_total 2\n"))
            #expect(text.contains("touchpoint_events_deduplicated_total 3\n"))
            #expect(text.contains(#"touchpoint_requests_total{route="/v1/batch",status="200"} 2"#))
            #expect(text.contains(#"touchpoint_requests_total{route="/v1/batch",status="401"} 1"#))
            #expect(text.contains("touchpoint_storage_write_seconds_count 2\n"))
        }
    }

    @Test func answersUnknownRoutesWithJSON() async throws {
        try await RouterHarness.run { client, _ async throws in
            let response = try await client.execute(uri: "/v2/nothing", method: .get)
            #expect(response.status == .notFound)
            #expect(try response.json["code"] == "not_found")
        }
    }

    @Test func servesRoutesAddedByTheEmbedder() async throws {
        let routes = CollectorRoutes { router, services in
            router.get("/dashboard/count") { request, context -> String in
                try services.authenticateAdmin(request, context: context)
                return "\(try await services.query.counts(source: "default").events)"
            }
        }
        try await RouterHarness.run(configure: { $0.routes = [routes] }) { client, _ async throws in
            #expect(try await client.execute(uri: "/dashboard/count", method: .get).status == .unauthorized)
            let response = try await client.execute(
                uri: "/dashboard/count", method: .get, headers: .bearer(RouterHarness.adminToken))
            #expect(String(buffer: response.body) == "0")
        }
    }
}
