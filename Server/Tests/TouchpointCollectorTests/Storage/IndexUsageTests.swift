import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TouchpointCore

@testable import TouchpointCollector
@testable import TouchpointCommands

/// Every index SQLite keeps is one some query reads: each index costs every insert a write, so one
/// that no query uses is only cost. The test runs every query the API, the dashboard, deletion and
/// retention make (as recorded by the backend) and reads each one's plan.
struct IndexUsageTests {
    @Test func everyIndexIsUsedBySomeQuery() async throws {
        try await RouterHarness.run { client, services async throws in
            let storage = try #require(services.storage as? SQLCollectorStorage)
            let backend = try #require(storage.backend as? SQLiteBackend)
            // Traffic with sessions, sign-ins, a group, an alias, surveys, promos.
            var history = HistoryBatches(seed: 4, client: 0, users: 30, days: 10, events: 600)
            for _ in 0..<6 {
                let response = try await client.execute(
                    uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey),
                    body: ByteBuffer(bytes: history.batch(count: 100)))
                #expect(response.status == .ok)
            }
            let extra = TestMessages.batch([
                ["type": "group", "groupId": "g1", "userId": "user-0-0", "traits": ["name": "Acme"], "messageId": "g"],
                ["type": "alias", "previousId": "old", "userId": "user-0-0", "messageId": "al"],
                TestMessages.track(
                    "survey_response", id: "s1", user: "user-0-0",
                    properties: ["id": "rate", "type": "text", "text": "fine"]),
                TestMessages.track("promo_tap", id: "p1", properties: ["appID": "a", "currentAppID": "b"]),
            ])
            _ = try await client.execute(
                uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey), body: ByteBuffer(json: extra))
            let session = try #require(
                try await storage.sessions(source: "default", filter: SessionFilter(), page: PageRequest(limit: 1))
                    .items.first)

            backend.statementLog.withLock { $0 = [] }
            let admin = HTTPFields.bearer(RouterHarness.adminToken)
            var json = admin
            json[.contentType] = "application/json"
            for (path, body) in [
                (
                    "/v1/cohorts",
                    #"{"name":"c","conditions":[{"event":"signup","days":30},{"trait":"plan","operator":"?"}]}"#
                ),
                ("/v1/insights", #"{"name":"i","kind":"paths","parameters":{"start":"signup","cohort":"1"}}"#),
                ("/v1/dashboards", #"{"name":"d","insights":[1]}"#),
            ] {
                let response = try await client.execute(
                    uri: path, method: .post, headers: json, body: ByteBuffer(string: body))
                #expect(response.status == .created, "\(path): \(response.status)")
            }
            let range =
                "from=\(Timestamp.format(Date().addingTimeInterval(-12 * 86_400)))&to=\(Timestamp.format(Date()))"
                .replacingOccurrences(of: ":", with: "%3A")
            let sessionId = session.sessionId
            let day = "from=\(Timestamp.format(Date().addingTimeInterval(-86_400)))&to=\(Timestamp.format(Date()))"
                .replacingOccurrences(of: ":", with: "%3A")
            for uri in [
                "/v1/query/sessions", "/v1/query/sessions?userId=user-0-0", "/v1/query/sessions?anonymousId=anon-0-1",
                "/v1/query/sessions?user=user-0-0", "/v1/query/sessions?event=cart_added&\(range)",
                "/v1/query/sessions/\(sessionId)/events", "/v1/query/events?name=signup&\(range)",
                "/v1/query/events?\(range)", "/v1/query/surveys?\(range)", "/v1/query/surveys/rate/answers",
                "/v1/query/promos?\(range)", "/v1/query/activity?\(day)", "/v1/query/counts",
                "/v1/query/users", "/v1/query/users?search=user-0", "/v1/query/users/user-0-0",
                "/v1/query/trends?event=screen_viewed&interval=day&breakdown=plan&\(range)",
                "/v1/query/funnel?steps=product_viewed,cart_added,checkout_completed&window=1d&\(range)",
                "/v1/query/retention?interval=day&start=signup&return=app_opened&\(range)",
                "/v1/query/trends?event=app_opened&interval=day&math=wau&\(range)",
                "/v1/query/stickiness?event=app_opened&interval=week&\(range)",
                "/v1/query/lifecycle?event=app_opened&interval=day&\(range)",
                "/v1/query/export?\(range)", "/v1/admin/deletions",
                "/v1/query/funnel?steps=product_viewed[plan=pro],cart_added&where=plan%3F&breakdown=plan&cohort=1&\(range)",
                "/v1/query/paths?start=screen_viewed&cohort=1&\(range)",
                "/v1/query/paths?end=signup&exclude=app_opened&\(range)",
                "/v1/query/trends?event=screen_viewed&cohort=1&\(range)",
                "/v1/query/retention?start=signup&cohort=1&\(range)",
                "/v1/cohorts", "/v1/cohorts/1", "/v1/cohorts/1/members", "/v1/insights", "/v1/insights/1",
                "/v1/dashboards", "/v1/dashboards/1",
            ] {
                let response = try await client.execute(uri: uri, method: .get, headers: admin)
                #expect(response.status == .ok, "\(uri): \(response.status)")
            }
            let changed = try await client.execute(
                uri: "/v1/dashboards/1", method: .put, headers: json, body: ByteBuffer(string: #"{"insights":[]}"#))
            #expect(changed.status == .ok)
            for path in ["/v1/dashboards/1", "/v1/insights/1", "/v1/cohorts/1"] {
                #expect(try await client.execute(uri: path, method: .delete, headers: admin).status == .ok, "\(path)")
            }
            var headers = admin
            headers[.contentType] = "application/json"
            let deletion = try await client.execute(
                uri: "/v1/admin/deletions", method: .post, headers: headers,
                body: ByteBuffer(string: #"{"userIds":["user-0-10"],"suppress":true}"#))
            #expect(deletion.status == .created)
            let id = try #require(try deletion.json["id"]?.stringValue)
            #expect(
                try await client.execute(uri: "/v1/admin/deletions/\(id)", method: .delete, headers: admin).status
                    == .ok)
            _ = try await storage.deleteEvents(source: "default", beforeMinute: 0, limit: 10)
            _ = try await storage.deleteSessions(source: "default", lastBefore: 0, limit: 10)
            let today = SourceCalendar.utc.day(of: Timestamp.milliseconds(Date()))
            try await storage.deleteDailyPeople(source: "default", before: today - 11)

            let statements = backend.statementLog.withLock { log in
                defer { log = nil }
                return log ?? []
            }
            // The writer's own statements run on its connection, past the log: its lookup of a
            // shared context by its text.
            var plans = [
                try await backend.query("EXPLAIN QUERY PLAN " + SharedContexts.sqliteAdd, [.int(1), .text("{}")])
                    .compactMap { $0.last?.text }.joined(separator: "\n")
            ]
            for statement in statements where !statement.sql.hasPrefix("BEGIN") && !statement.sql.hasPrefix("COMMIT") {
                let plan = try await backend.query("EXPLAIN QUERY PLAN " + statement.sql, statement.binds)
                plans.append(plan.compactMap { $0.last?.text }.joined(separator: "\n"))
            }
            let used = plans.joined(separator: "\n")
            let indexes = try await backend.query(
                "SELECT name FROM sqlite_schema WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex%'", [])
            let names = indexes.compactMap { $0.first?.text }
            #expect(names.count >= 10)
            for name in names {
                // An index name followed by a space, a parenthesis or the end, so that
                // events_minute is not found inside events_name_minute.
                let found = used.range(of: "INDEX \(name)( |$)", options: .regularExpression) != nil
                #expect(found, "no query uses the index \(name)")
            }
        }
    }
}
