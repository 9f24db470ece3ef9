import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TouchpointCore

@testable import TouchpointCollector

/// Paths, the new funnel and cohort parameters, and saved cohorts, insights and dashboards over
/// HTTP, on both databases.
struct InsightsRouteTests {
    static func get(_ client: any TestClientProtocol, _ uri: String) async throws -> TestResponse {
        try await client.execute(uri: uri, method: .get, headers: .bearer(RouterHarness.adminToken))
    }

    static func send(_ client: any TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, _ body: JSONValue)
        async throws -> TestResponse
    {
        var headers = HTTPFields.bearer(RouterHarness.adminToken)
        headers[.contentType] = "application/json"
        return try await client.execute(
            uri: uri, method: method, headers: headers, body: ByteBuffer(string: body.jsonString()))
    }

    /// Three visitors: a1 opens, views, buys; a2 opens, views twice, adds to the cart; a3 opens
    /// and searches. a1 signs in as u1 with the plan pro.
    static func seed(_ client: any TestClientProtocol) async throws {
        var messages: [JSONValue] = []
        func track(_ name: String, _ anonymous: String, _ at: Double, _ properties: [String: JSONValue] = [:]) {
            messages.append(
                TestMessages.track(
                    name, id: "\(anonymous)-\(messages.count)", session: "s-\(anonymous)", anonymous: anonymous, at: at,
                    properties: properties))
        }
        track("open", "a1", 10)
        track("view", "a1", 20, ["plan": "pro"])
        track("buy", "a1", 40, ["amount": 30])
        track("open", "a2", 11)
        track("view", "a2", 21, ["plan": "free"])
        track("view", "a2", 22)
        track("cart", "a2", 90)
        track("open", "a3", 12)
        track("search", "a3", 13)
        messages.append(
            .object([
                "type": "identify", "messageId": "i1", "userId": "u1", "anonymousId": "a1", "traits": ["plan": "pro"],
                "timestamp": .string(Timestamp.format(TestMessages.base.addingTimeInterval(50))),
            ]))
        let response = try await client.execute(
            uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey),
            body: ByteBuffer(json: TestMessages.batch(messages)))
        #expect(try response.json["accepted"] == .int(messages.count))
    }

    static let range = "from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z"

    @Test(arguments: StorageKind.available)
    func pathsAnswerAsATreeOfTheMostFrequentWays(kind: StorageKind) async throws {
        try await RouterHarness.run(storage: kind) { client, _ async throws in
            try await Self.seed(client)
            let after = try await Self.get(client, "/v1/query/paths?start=open&steps=2&\(Self.range)")
            #expect(after.status == .ok)
            let root = try #require(try after.json["root"])
            #expect(root["event"] == "open")
            #expect(root["people"] == 3)
            // a2's two views count once: view, then buy (a1) or cart (a2); search (a3) ends there.
            #expect(root["children"]?[0]?["event"] == "view")
            #expect(root["children"]?[0]?["people"] == 2)
            #expect(root["children"]?[0]?["children"]?[0]?["event"] == "buy")
            #expect(root["children"]?[0]?["children"]?[1]?["event"] == "cart")
            #expect(root["children"]?[1]?["event"] == "search")
            #expect(root["children"]?[1]?["ended"] == 1)
            let narrow = try await Self.get(client, "/v1/query/paths?start=open&steps=1&top=1&\(Self.range)")
            #expect(try narrow.json["root"]?["children"]?[1]?["other"] == true)
            #expect(try narrow.json["root"]?["children"]?[1]?["people"] == 1)
            let before = try await Self.get(client, "/v1/query/paths?end=buy&steps=3&\(Self.range)")
            #expect(try before.json["end"] == "buy")
            #expect(try before.json["root"]?["children"]?[0]?["event"] == "view")
            #expect(try before.json["root"]?["children"]?[0]?["children"]?[0]?["event"] == "open")
            let skipped = try await Self.get(client, "/v1/query/paths?start=open&exclude=view&steps=1&\(Self.range)")
            let events = try skipped.json["root"]?["children"]?.arrayValue?.compactMap { $0["event"]?.stringValue }
            #expect(Set(events ?? []) == ["buy", "cart", "search"])
        }
    }

    @Test(arguments: StorageKind.available)
    func funnelsFilterBreakDownAndTimeTheConversion(kind: StorageKind) async throws {
        try await RouterHarness.run(storage: kind) { client, _ async throws in
            try await Self.seed(client)
            let funnel = try await Self.get(
                client, "/v1/query/funnel?steps=open,view&window=1h&breakdown=plan&\(Self.range)")
            #expect(try funnel.json["steps"]?[1]?["users"] == 2)
            let groups = try funnel.json["groups"]?.arrayValue ?? []
            // The plan of the first step: open has none.
            #expect(groups.count == 1)
            #expect(groups.first?["value"] == .null)
            let times = try #require(try funnel.json["timeToConvert"])
            #expect(times["users"] == 2)
            #expect(times["medianSeconds"]?.doubleValue == 10)
            #expect(times["buckets"]?[1]?["fromSeconds"] == 10)
            #expect(times["buckets"]?[1]?["users"] == 2)
            let filtered = try await Self.get(
                client, "/v1/query/funnel?steps=open,view[plan=pro],buy[amount>20]&window=1h&\(Self.range)")
            #expect(try filtered.json["steps"]?[2]?["users"] == 1)
            let everyStep = try await Self.get(
                client, "/v1/query/funnel?steps=view,cart&where=plan!=pro&window=1h&breakdown=plan&\(Self.range)")
            #expect(try everyStep.json["steps"]?[1]?["users"] == 1)
            #expect(try everyStep.json["groups"]?[0]?["value"] == "free")
            #expect(try everyStep.json["where"] == ["plan!=pro"])
        }
    }

    @Test(
        arguments: StorageKind.available,
        [
            ("/v1/query/funnel?steps=open,buy[plan]", "steps"),
            ("/v1/query/funnel?steps=open,buy[amount>lots]", "steps"),
            ("/v1/query/funnel?steps=open,buy[]", "steps"),
            ("/v1/query/funnel?steps=open,buy&where=plan", "where"),
            ("/v1/query/funnel?steps=open,buy&where=amount<x", "where"),
            ("/v1/query/funnel?steps=open,buy&breakdown=plan%27--", "breakdown"),
            ("/v1/query/funnel?steps=open,buy&window=0d", "window"),
            ("/v1/query/funnel?steps=open,buy&cohort=abc", "cohort"),
            ("/v1/query/funnel?steps=open,buy&cohort=999", "cohort"),
            ("/v1/query/paths", "start"),
            ("/v1/query/paths?start=a&end=b", "end"),
            ("/v1/query/paths?start=a&steps=9", "steps"),
            ("/v1/query/paths?start=a&top=0", "top"),
            ("/v1/query/paths?end=a&window=forever", "window"),
            ("/v1/query/paths?start=a&exclude=b,a", "exclude"),
            ("/v1/query/paths?start=a&cohort=999", "cohort"),
            ("/v1/query/paths?start=a&from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", "from"),
            ("/v1/query/trends?event=buy&cohort=0", "cohort"),
            ("/v1/query/stickiness?event=buy&cohort=x", "cohort"),
            ("/v1/query/lifecycle?event=buy&cohort=999", "cohort"),
            ("/v1/query/trends?event=buy&cohort=999", "cohort"),
            ("/v1/query/retention?start=open&cohort=x", "cohort"),
            ("/v1/query/retention?start=open&cohort=12", "cohort"),
        ])
    func badParametersAre400sThatNameThem(kind: StorageKind, bad: (uri: String, parameter: String)) async throws {
        let (uri, parameter) = bad
        try await RouterHarness.run(storage: kind) { client, _ async throws in
            let response = try await Self.get(client, uri)
            #expect(response.status == .badRequest, "\(uri)")
            #expect(try response.json["code"] == "invalid_parameter")
            #expect(try response.json["path"] == .string(parameter), "\(uri)")
        }
    }

    @Test(arguments: StorageKind.available)
    func cohortsInsightsAndDashboardsAreSavedChangedAndDeleted(kind: StorageKind) async throws {
        try await RouterHarness.run(storage: kind, configure: DashboardAnalyticsTests.configure) {
            client, _ async throws in
            try await Self.seed(client)
            // A cohort: who viewed at least once in the last 30 days (the clock reads three days
            // after the events), and whose plan is pro.
            let created = try await Self.send(
                client, .post, "/v1/cohorts",
                [
                    "name": "Pro viewers",
                    "conditions": [
                        ["event": "view", "atLeast": 1, "days": 30],
                        ["trait": "plan", "operator": "=", "value": "pro"],
                    ],
                ])
            #expect(created.status == .created)
            let cohort = try #require(try created.json["id"]?.intValue)
            let shown = try await Self.get(client, "/v1/cohorts/\(cohort)")
            #expect(try shown.json["size"] == 1)
            #expect(try shown.json["conditions"]?[1]?["operator"] == "=")
            let members = try await Self.get(client, "/v1/cohorts/\(cohort)/members")
            #expect(try members.json["items"]?[0]?["id"] == "u1")
            #expect(try members.json["items"]?[0]?["isUser"] == true)
            // The cohort filters an insight: only u1 (a1 before signing in) went on to view.
            let ofCohort = try await Self.get(client, "/v1/query/funnel?steps=open,view&cohort=\(cohort)&\(Self.range)")
            #expect(try ofCohort.json["steps"]?[0]?["users"] == 1)

            let funnel = try await Self.send(
                client, .post, "/v1/insights",
                [
                    "name": "Open to view", "kind": "funnels",
                    "parameters": ["steps": "open,view", "cohort": .string(String(cohort)), "source": "web"],
                ])
            #expect(funnel.status == .created)
            let funnelId = try #require(try funnel.json["id"]?.intValue)
            #expect(try funnel.json["parameters"]?["source"] == nil)
            #expect(try funnel.json["query"] == .string("/v1/query/funnel?cohort=\(cohort)&steps=open%2Cview"))
            let trend = try await Self.send(
                client, .post, "/v1/insights",
                ["name": "Views", "kind": "trends", "parameters": "event=view&interval=hour"])
            let trendId = try #require(try trend.json["id"]?.intValue)
            #expect(try trend.json["parameters"]?["interval"] == "hour")
            let sticky = try await Self.send(
                client, .post, "/v1/insights",
                [
                    "name": "Sticky", "kind": "stickiness",
                    "parameters": ["event": "view", "cohort": .string(String(cohort))],
                ])
            #expect(sticky.status == .created)
            #expect(try sticky.json["query"] == .string("/v1/query/stickiness?cohort=\(cohort)&event=view"))
            let stickyId = try #require(try sticky.json["id"]?.intValue)
            let unsaved = try await client.execute(
                uri: "/v1/insights/\(stickyId)", method: .delete, headers: .bearer(RouterHarness.adminToken))
            #expect(unsaved.status == .ok)

            let board = try await Self.send(
                client, .post, "/v1/dashboards", ["name": "Growth", "insights": [.int(funnelId), .int(trendId)]])
            #expect(board.status == .created)
            let boardId = try #require(try board.json["id"]?.intValue)
            let reordered = try await Self.send(
                client, .put, "/v1/dashboards/\(boardId)",
                ["name": "Growth, weekly", "insights": [.int(trendId), .int(funnelId)]])
            #expect(try reordered.json["insights"] == [.int(trendId), .int(funnelId)])
            let read = try await Self.get(client, "/v1/dashboards/\(boardId)")
            #expect(try read.json["name"] == "Growth, weekly")
            #expect(
                try read.json["items"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["Views", "Open to view"])

            let renamed = try await Self.send(
                client, .put, "/v1/insights/\(funnelId)", ["name": "  Opened, then viewed "])
            #expect(try renamed.json["name"] == "Opened, then viewed")
            #expect(try renamed.json["parameters"]?["steps"] == "open,view")
            let listed = try await Self.get(client, "/v1/insights")
            #expect(try listed.json["items"]?.arrayValue?.map { $0["name"] } == ["Opened, then viewed", "Views"])

            // A cohort a saved insight uses stays until the insight is gone.
            let inUse = try await client.execute(
                uri: "/v1/cohorts/\(cohort)", method: .delete, headers: .bearer(RouterHarness.adminToken))
            #expect(inUse.status == .conflict)
            #expect(try inUse.json["error"]?.stringValue?.contains("Opened, then viewed") == true)
            let deleted = try await client.execute(
                uri: "/v1/insights/\(funnelId)", method: .delete, headers: .bearer(RouterHarness.adminToken))
            #expect(deleted.status == .ok)
            #expect(try await Self.get(client, "/v1/dashboards/\(boardId)").json["insights"] == [.int(trendId)])
            #expect(try await Self.get(client, "/v1/insights/\(funnelId)").status == .notFound)
            for path in ["/v1/cohorts/\(cohort)", "/v1/dashboards/\(boardId)"] {
                let response = try await client.execute(
                    uri: path, method: .delete, headers: .bearer(RouterHarness.adminToken))
                #expect(response.status == .ok, "\(path)")
                #expect(try await Self.get(client, path).status == .notFound, "\(path)")
            }
            // Each source has its own.
            #expect(try await Self.get(client, "/v1/insights?source=web").json["items"] == [])
            #expect(try await Self.get(client, "/v1/insights/\(trendId)?source=web").status == .notFound)
        }
    }

    @Test(
        arguments: StorageKind.available,
        [
            ("POST", "/v1/insights", #"{"name":"x","kind":"pie","parameters":{}}"#, "kind"),
            ("POST", "/v1/insights", #"{"name":"x","kind":"funnels","parameters":{"steps":"a"}}"#, "parameters.steps"),
            ("POST", "/v1/insights", #"{"name":" ","kind":"funnels","parameters":{"steps":"a,b"}}"#, "name"),
            (
                "POST", "/v1/insights", #"{"name":"x","kind":"paths","parameters":{"start":"a","cohort":"77"}}"#,
                "parameters.cohort"
            ),
            ("POST", "/v1/insights", #"{"name":"x","kind":"trends","parameters":[1]}"#, "parameters"),
            (
                "POST", "/v1/insights",
                #"{"name":"x","kind":"stickiness","parameters":{"event":"a","interval":"day"}}"#,
                "parameters.interval"
            ),
            ("POST", "/v1/insights", #"{"name":"x","kind":"lifecycle","parameters":{}}"#, "parameters.event"),
            ("POST", "/v1/dashboards", #"{"name":"d","insights":[999]}"#, "insights[0]"),
            ("POST", "/v1/dashboards", #"{"name":"d","insights":"all"}"#, "insights"),
            ("POST", "/v1/cohorts", #"{"name":"c","conditions":[]}"#, "conditions"),
            ("POST", "/v1/cohorts", #"{"name":"c","conditions":[{"event":"a","atLeast":0}]}"#, "conditions[0].atLeast"),
            ("POST", "/v1/cohorts", #"{"name":"c","conditions":[{"event":"a","days":1.5}]}"#, "conditions[0].days"),
            (
                "POST", "/v1/cohorts", #"{"name":"c","conditions":[{"trait":"plan","operator":"like","value":"x"}]}"#,
                "conditions[0].operator"
            ),
            (
                "POST", "/v1/cohorts", #"{"name":"c","conditions":[{"trait":"age","operator":">","value":"old"}]}"#,
                "conditions[0].trait"
            ),
            ("POST", "/v1/cohorts", #"{"name":"c","conditions":[{"plan":"pro"}]}"#, "conditions[0]"),
            ("PUT", "/v1/cohorts/1", #"{"name":"c"}"#, ""),
            ("GET", "/v1/insights/abc", "", ""),
            ("DELETE", "/v1/dashboards/5", "", ""),
        ])
    func savedRequestsThatCannotBeUsedAreRefusedByName(
        kind: StorageKind, request: (String, String, String, String)
    ) async throws {
        let (method, uri, body, field) = request
        try await RouterHarness.run(storage: kind) { client, _ async throws in
            var headers = HTTPFields.bearer(RouterHarness.adminToken)
            headers[.contentType] = "application/json"
            let response = try await client.execute(
                uri: uri, method: HTTPRequest.Method(method)!, headers: headers, body: ByteBuffer(string: body))
            if field.isEmpty {
                #expect(response.status == .notFound, "\(method) \(uri)")
            } else {
                #expect(response.status == .badRequest, "\(method) \(uri) \(body)")
                #expect(try response.json["path"] == .string(field), "\(body)")
            }
        }
    }
}
