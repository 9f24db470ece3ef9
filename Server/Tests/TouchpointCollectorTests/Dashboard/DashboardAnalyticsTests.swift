import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

/// The People, Trends, Funnels and Retention pages, and every table's CSV.
struct DashboardAnalyticsTests {
    static func configure(_ configuration: inout CollectorConfiguration) {
        configuration.clock = ManualClock(start: TestMessages.base.addingTimeInterval(3 * 86_400))
    }

    static func seed(_ client: any TestClientProtocol) async throws {
        try await AnalyticsRouteTests.seed(client)
        // A value a spreadsheet would take for a formula, and markup.
        let messages: [JSONValue] = [
            .object([
                "type": "identify", "messageId": "i2", "userId": "=HYPERLINK(\"x\")",
                "traits": ["name": "<b>Bold</b>"],
                "timestamp": .string(Timestamp.format(TestMessages.base.addingTimeInterval(50))),
            ])
        ]
        _ = try await client.execute(
            uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey),
            body: ByteBuffer(json: TestMessages.batch(messages)))
    }

    @Test func peoplePagesListSearchAndShowAPerson() async throws {
        try await RouterHarness.run(configure: Self.configure) { client, _ async throws in
            try await Self.seed(client)
            let cookie = try await DashboardClient.signIn(client)
            let list = try await DashboardClient.page(client, "/dashboard/people", cookie: cookie)
            #expect(list.contains("href=\"/dashboard/people/u1\""))
            #expect(list.contains("ada@example.com"))
            #expect(list.contains("&lt;b&gt;Bold&lt;/b&gt;"))
            #expect(!list.contains("<b>Bold</b>"))
            let found = try await DashboardClient.page(client, "/dashboard/people?q=ADA%40", cookie: cookie)
            #expect(found.contains("/dashboard/people/u1"))
            #expect(!found.contains("HYPERLINK"))
            let person = try await DashboardClient.page(client, "/dashboard/people/u1", cookie: cookie)
            #expect(person.contains("<code>a1</code>"))
            #expect(person.contains("<th scope=\"row\">plan</th><td>pro</td>"))
            #expect(person.contains("/dashboard/sessions/s1"))
            _ = try await DashboardClient.page(client, "/dashboard/people/nobody", cookie: cookie, status: .notFound)
        }
    }

    @Test func trendsFunnelsAndRetentionPagesShowTheirTables() async throws {
        try await RouterHarness.run(configure: Self.configure) { client, _ async throws in
            try await Self.seed(client)
            let cookie = try await DashboardClient.signIn(client)
            let empty = try await DashboardClient.page(client, "/dashboard/trends", cookie: cookie)
            #expect(empty.contains("Name an event"))
            let trend = try await DashboardClient.page(
                client, "/dashboard/trends?event=buy&breakdown=plan&from=2026-01-01T00%3A00&to=2026-01-03T00%3A00",
                cookie: cookie)
            #expect(trend.contains("id=\"trend-chart\""))
            #expect(trend.contains("<th scope=\"row\">2026-01-01</th><td>1</td><td>1</td><td>1</td></tr>"))
            #expect(trend.contains("format=csv"))
            let funnel = try await DashboardClient.page(
                client, "/dashboard/funnels?steps=open%2Cbuy&window=1h&from=2026-01-01T00%3A00", cookie: cookie)
            #expect(funnel.contains("<td class=\"users\">1</td>"))
            #expect(funnel.contains("20 s"))
            let retention = try await DashboardClient.page(
                client, "/dashboard/retention?start=open&return=buy&from=2026-01-01T00%3A00&to=2026-01-02T00%3A00",
                cookie: cookie)
            #expect(retention.contains("<th scope=\"row\">2026-01-01</th><td>1</td>"))
        }
    }

    @Test(arguments: [
        ("/dashboard/trends?event=buy&interval=fortnight", "interval"),
        ("/dashboard/trends?event=buy&from=soon", "from"),
        ("/dashboard/funnels?steps=open", "steps"),
        ("/dashboard/retention?start=open&periods=99", "periods"),
        ("/dashboard/people?q=" + String(repeating: "x", count: 201), "q"),
    ])
    func badParametersShowAProblemThatNamesThem(uri: String, parameter: String) async throws {
        try await RouterHarness.run(configure: Self.configure) { client, _ async throws in
            let cookie = try await DashboardClient.signIn(client)
            let page = try await DashboardClient.page(client, uri, cookie: cookie, status: .badRequest)
            #expect(page.contains("role=\"alert\">\(parameter): "), "\(uri)")
        }
    }

    @Test func tablesDownloadAsCSVWithFormulasDefused() async throws {
        try await RouterHarness.run(configure: Self.configure) { client, _ async throws in
            try await Self.seed(client)
            let cookie = try await DashboardClient.signIn(client)
            let people = try await client.execute(
                uri: "/dashboard/people?format=csv", method: .get, headers: DashboardClient.cookie(cookie))
            #expect(people.status == .ok)
            #expect(people.headers[.contentType] == "text/csv; charset=utf-8")
            #expect(people.headers[.contentDisposition] == "attachment; filename=\"people.csv\"")
            let lines = String(buffer: people.body).components(separatedBy: "\r\n")
            #expect(lines.first == "userId,name,email,firstSeen,lastSeen,events,traits")
            #expect(lines.contains { $0.hasPrefix("\"'=HYPERLINK(\"\"x\"\")\",<b>Bold</b>,") })
            #expect(lines.contains { $0.hasPrefix("u1,,ada@example.com,") })
            let trend = try await client.execute(
                uri:
                    "/dashboard/trends?event=buy&interval=day&from=2026-01-01T00%3A00&to=2026-01-03T00%3A00&format=csv",
                method: .get, headers: DashboardClient.cookie(cookie))
            #expect(
                String(buffer: trend.body)
                    == "start,events,people\r\n2026-01-01T00:00:00.000Z,1,1\r\n2026-01-02T00:00:00.000Z,0,0\r\n")
            let noTable = try await client.execute(
                uri: "/dashboard/trends?format=csv", method: .get, headers: DashboardClient.cookie(cookie))
            #expect(noTable.status == .notFound)
            let badParameters = try await client.execute(
                uri: "/dashboard/trends?event=buy&interval=fortnight&format=csv", method: .get,
                headers: DashboardClient.cookie(cookie))
            #expect(badParameters.status == .badRequest)
        }
    }

    @Test func everyPageWithATableDownloadsItAsCSV() async throws {
        try await RouterHarness.run(configure: Self.configure) { client, _ async throws in
            try await Self.seed(client)
            try await QueryRouteTests.seed(client)
            let cookie = try await DashboardClient.signIn(client)
            let pages: [(String, String)] = [
                ("/dashboard?", "minute,events"),
                ("/dashboard/sessions?", "sessionId,userId,anonymousId,firstEvent,lastEvent,events"),
                ("/dashboard/surveys?", "surveyId,presented,responded,dismissed,responseRate"),
                ("/dashboard/surveys/rate?", "option,answers"),
                ("/dashboard/promotion?", "promotedApp,promotingApp,impressions,taps,clickThrough"),
                ("/dashboard/people?", "userId,name,email,firstSeen,lastSeen,events,traits"),
                ("/dashboard/people/u1?", "trait,value"),
                ("/dashboard/trends?event=buy&", "start,events,people"),
                ("/dashboard/funnels?steps=open,buy&", "step,people,conversionFromFirst"),
                ("/dashboard/retention?start=open&", "cohort,people,day0"),
            ]
            for (page, header) in pages {
                let response = try await client.execute(
                    uri: page + "format=csv", method: .get, headers: DashboardClient.cookie(cookie))
                #expect(response.status == .ok, "\(page)")
                #expect(response.headers[.contentType] == "text/csv; charset=utf-8", "\(page)")
                #expect(
                    String(buffer: response.body).hasPrefix(header),
                    "\(page): \(String(buffer: response.body).prefix(80))")
                // The page links to its CSV.
                let html = try await DashboardClient.page(client, String(page.dropLast()), cookie: cookie)
                #expect(html.contains("format=csv"), "\(page)")
            }
            let promotion = try await client.execute(
                uri: "/dashboard/promotion?format=csv", method: .get, headers: DashboardClient.cookie(cookie))
            #expect(String(buffer: promotion.body).contains("notes,mail,2,1,0.5"))
        }
    }

    @Test func csvCells() {
        #expect(DashboardCSV.cell("plain") == "plain")
        #expect(DashboardCSV.cell("a,b") == "\"a,b\"")
        #expect(DashboardCSV.cell("say \"hi\"") == "\"say \"\"hi\"\"\"")
        #expect(DashboardCSV.cell("=1+1") == "'=1+1")
        #expect(DashboardCSV.cell("-3") == "-3")  // a number stays a number
        #expect(DashboardCSV.cell("@SUM(A1)") == "'@SUM(A1)")
        #expect(DashboardCSV.cell("line\nbreak") == "\"line\nbreak\"")
    }
}
