import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

struct DashboardRouteTests {
    /// Every protected route with its parameters filled in.
    static var protectedPages: [String] {
        DashboardRoutes.pages.map { page in
            page.path.replacingOccurrences(of: ":sessionId", with: "s1").replacingOccurrences(
                of: ":surveyId", with: "rate"
            ).replacingOccurrences(of: ":userId", with: "u1").replacingOccurrences(of: ":cohortId", with: "1")
                .replacingOccurrences(of: ":boardId", with: "1").replacingOccurrences(of: ":insightId", with: "1")
        }
    }

    /// The query tests' data plus a hostile property and a second survey's text answers.
    static func seed(_ client: any TestClientProtocol) async throws {
        try await QueryRouteTests.seed(client)
        var messages: [JSONValue] = [
            TestMessages.track(
                "checkout", session: "s1", user: "u1", at: 8, properties: ["note": "<script>alert(1)</script>"])
        ]
        for index in 0..<25 {
            messages.append(
                TestMessages.track(
                    "survey_response", session: "s4", user: "u2", at: 60 + Double(index),
                    properties: ["id": "feedback", "type": "text", "text": .string("answer \(index)")]))
        }
        let response = try await client.execute(
            uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey),
            body: ByteBuffer(json: TestMessages.batch(messages)))
        #expect(try response.json["accepted"] == .int(messages.count))
    }

    /// A complete survey config with one survey, `rate`.
    static let rateConfig = """
        {"surveys":[{"id":"rate","title":"Rate us","message":"How was it?",\
        "response":{"type":"options","options":["5","4","3"]},"trigger":{"event":{"name":"checkout"}}}]}
        """

    /// A clock ten minutes after the seeded events.
    static func configure(_ configuration: inout CollectorConfiguration) {
        configuration.clock = ManualClock(start: TestMessages.base.addingTimeInterval(600))
    }

    @Test func everyRouteRefusesARequestWithoutTheSessionCookie() async throws {
        try await RouterHarness.run(configure: Self.configure) { client, _ async throws in
            try await Self.seed(client)
            let attempts: [(String, HTTPFields)] = [
                ("no cookie", [:]),
                (
                    "a made-up cookie",
                    DashboardClient.cookie("touchpoint_dashboard=" + String(repeating: "a", count: 64))
                ),
                ("the admin token as bearer", .bearer(RouterHarness.adminToken)),
                (
                    "the admin token as cookie",
                    DashboardClient.cookie("touchpoint_dashboard=" + RouterHarness.adminToken)
                ),
            ]
            #expect(Self.protectedPages.count == 20)
            for page in Self.protectedPages {
                for (attempt, headers) in attempts {
                    let response = try await client.execute(
                        uri: page + "?source=default", method: .get, headers: headers)
                    #expect(response.status == .seeOther, "\(page) with \(attempt)")
                    let location = try #require(response.headers[.location])
                    #expect(location.hasPrefix("/dashboard/sign-in?next=%2Fdashboard"), "\(page): \(location)")
                    #expect(response.body.readableBytes == 0, "\(page) with \(attempt) sent a body")
                }
            }
            for route in DashboardRoutes.otherProtectedRoutes {
                for (attempt, headers) in attempts {
                    let response = try await client.execute(uri: route.path, method: route.method, headers: headers)
                    #expect(response.status == .unauthorized, "\(route.method) \(route.path) with \(attempt)")
                    #expect(!String(buffer: response.body).contains("u1"))
                }
            }
        }
    }

    @Test func signInSetsAStrictHttpOnlySessionCookieAndSignOutEndsIt() async throws {
        try await RouterHarness.run { client, _ async throws in
            let wrong = try await client.execute(
                uri: "/dashboard/sign-in", method: .post, headers: DashboardClient.form,
                body: ByteBuffer(string: "token=guess&next=%2Fdashboard"))
            #expect(wrong.status == .unauthorized)
            #expect(wrong.headers[.setCookie] == nil)
            #expect(String(buffer: wrong.body).contains("not this collector&#39;s admin token"))

            let right = try await client.execute(
                uri: "/dashboard/sign-in", method: .post, headers: DashboardClient.form,
                body: ByteBuffer(string: "token=\(RouterHarness.adminToken)&next=%2Fdashboard%2Fsurveys"))
            #expect(right.status == .seeOther)
            #expect(right.headers[.location] == "/dashboard/surveys")
            let setCookie = try #require(right.headers[.setCookie])
            #expect(setCookie.hasPrefix("touchpoint_dashboard="))
            #expect(setCookie.contains("HttpOnly"))
            #expect(setCookie.contains("SameSite=Strict"))
            #expect(setCookie.contains("Path=/dashboard"))
            #expect(!setCookie.contains(RouterHarness.adminToken))
            let cookie = try #require(setCookie.split(separator: ";").first.map(String.init))

            for page in Self.protectedPages {
                let response = try await client.execute(
                    uri: page, method: .get, headers: DashboardClient.cookie(cookie))
                #expect([.ok, .notFound].contains(response.status), "\(page): \(response.status)")
                #expect(response.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
                #expect(response.headers[.cacheControl] == "no-store")
            }

            let signOut = try await client.execute(
                uri: "/dashboard/sign-out", method: .post, headers: DashboardClient.cookie(cookie))
            #expect(signOut.status == .seeOther)
            #expect(signOut.headers[.setCookie]?.contains("Max-Age=0") == true)
            let after = try await client.execute(
                uri: "/dashboard", method: .get, headers: DashboardClient.cookie(cookie))
            #expect(after.status == .seeOther)
        }
    }

    @Test func formsPostedFromAnotherSiteAreRefused() async throws {
        try await RouterHarness.run(.live, configure: { $0.publicURL = URL(string: "https://collector.example.com") }) {
            client, _ async throws in
            let body = "token=\(RouterHarness.adminToken)&next=%2Fdashboard"
            for origin in ["https://evil.example", "null", "http://collector.example.com"] {
                var headers = DashboardClient.form
                headers[HTTPField.Name("Origin")!] = origin
                let response = try await client.execute(
                    uri: "/dashboard/sign-in", method: .post, headers: headers, body: ByteBuffer(string: body))
                #expect(response.status == .forbidden, "\(origin)")
                #expect(response.headers[.setCookie] == nil)
                #expect(String(buffer: response.body).contains("Origin: \(origin)"))
            }
            // The dashboard's own origin (the public URL's) and a client that sends none may sign in.
            for origin in ["https://collector.example.com", "HTTPS://Collector.Example.com/", nil] {
                var headers = DashboardClient.form
                if let origin { headers[HTTPField.Name("Origin")!] = origin }
                let response = try await client.execute(
                    uri: "/dashboard/sign-in", method: .post, headers: headers, body: ByteBuffer(string: body))
                #expect(response.status == .seeOther, "\(origin ?? "no origin")")
                // Served as https (the public URL says so): the cookie is Secure.
                #expect(response.headers[.setCookie]?.contains("Secure") == true)
            }
            // Sign-out too.
            let cookie = try await DashboardClient.signIn(client)
            var headers = DashboardClient.cookie(cookie)
            headers[HTTPField.Name("Origin")!] = "https://evil.example"
            let signOut = try await client.execute(uri: "/dashboard/sign-out", method: .post, headers: headers)
            #expect(signOut.status == .forbidden)
            #expect(
                try await client.execute(uri: "/dashboard", method: .get, headers: DashboardClient.cookie(cookie))
                    .status
                    == .ok)
        }
    }

    @Test func theCookieIsSecureOnlyWhenTheDashboardIsServedOverHTTPS() async throws {
        try await RouterHarness.run { client, _ async throws in
            let plain = try await client.execute(
                uri: "/dashboard/sign-in", method: .post, headers: DashboardClient.form,
                body: ByteBuffer(string: "token=\(RouterHarness.adminToken)&next=%2Fdashboard"))
            #expect(plain.headers[.setCookie]?.contains("Secure") == false)
            var headers = DashboardClient.form
            headers[HTTPField.Name("X-Forwarded-Proto")!] = "https"
            let proxied = try await client.execute(
                uri: "/dashboard/sign-in", method: .post, headers: headers,
                body: ByteBuffer(string: "token=\(RouterHarness.adminToken)&next=%2Fdashboard"))
            #expect(proxied.headers[.setCookie]?.contains("Secure") == true)
        }
    }

    @Test(arguments: ["https://example.com/", "//example.com/dashboard", "/v1/query/sessions", "/dashboard\\..\\x"])
    func signInNeverRedirectsOffTheDashboard(next: String) async throws {
        try await RouterHarness.run { client, _ async throws in
            let response = try await client.execute(
                uri: "/dashboard/sign-in", method: .post, headers: DashboardClient.form,
                body: ByteBuffer(
                    string: "token=\(RouterHarness.adminToken)&next=\(QueryParameters.encoded(next))"))
            #expect(response.status == .seeOther)
            #expect(response.headers[.location] == "/dashboard")
        }
    }

    @Test func publicRoutesHoldNoData() async throws {
        try await RouterHarness.run { client, _ async throws in
            try await Self.seed(client)
            let root = try await client.execute(uri: "/", method: .get)
            #expect(root.status == .seeOther)
            #expect(root.headers[.location] == "/dashboard")
            let signIn = try await client.execute(uri: "/dashboard/sign-in", method: .get)
            #expect(signIn.status == .ok)
            #expect(String(buffer: signIn.body).contains("name=\"token\""))
            #expect(!String(buffer: signIn.body).contains("u1"))
            let css = try await client.execute(uri: "/dashboard/assets/dashboard.css", method: .get)
            #expect(css.headers[.contentType] == "text/css; charset=utf-8")
            let script = try await client.execute(uri: "/dashboard/assets/dashboard.js", method: .get)
            #expect(String(buffer: script.body).contains("EventSource"))
            #expect(!String(buffer: script.body).contains("innerHTML"))
        }
    }

    @Test func overviewChartsEventsPerMinuteAndCountsActiveSessions() async throws {
        try await RouterHarness.run(configure: Self.configure) { client, _ async throws in
            try await Self.seed(client)
            let cookie = try await DashboardClient.signIn(client)
            let html = try await DashboardClient.page(client, "/dashboard", cookie: cookie)
            // 14 + 1 + 25 events, all within the 3 hours before the clock.
            #expect(html.between("id=\"recent-events\">", "<") == "40")
            #expect(html.between("id=\"active-sessions\">", "<") == "4")
            #expect(html.between("id=\"total-events\">", "<") == "40")
            let chart = try #require(html.between("<svg class=\"chart\" id=\"activity-chart\"", "</svg>"))
            // By arrival: the events' own times are seconds 0…200, but every one arrived at the
            // clock's minute 10.
            #expect(chart.occurrences(of: "<rect class=\"bar\"") == 1)
            #expect(chart.contains("<title>2026-01-01 00:10:00: 40</title>"))
            // The events most seen this week, by their own time, most first.
            #expect(html.contains("id=\"top-events\""))
            let top = try #require(html.between("<tr data-event=\"survey_response\">", "</tr>"))
            // 25 here and 2 of QueryRouteTests.seed.
            #expect(top.contains("<td class=\"count\">27</td>"))
            #expect(html.contains("<th scope=\"row\"><a href=\"/dashboard?source=web\">web</a></th><td>0</td>"))

            let bad = try await DashboardClient.page(client, "/dashboard?hours=99", cookie: cookie, status: .badRequest)
            #expect(bad.contains("hours: expected 1 to 24"))

            let web = try await DashboardClient.page(client, "/dashboard?source=web", cookie: cookie)
            #expect(web.between("id=\"total-events\">", "<") == "0")
            #expect(web.contains("href=\"/dashboard/sessions?source=web\""))
            #expect(html.between("<p id=\"retention\">", "<") == "Every event is kept (no retention set).")
        }
    }

    @Test func theOverviewSaysWhatIsKept() async throws {
        try await RouterHarness.run(configure: { $0.retentionDays = 90 }) { client, _ async throws in
            let cookie = try await DashboardClient.signIn(client)
            let html = try await DashboardClient.page(client, "/dashboard", cookie: cookie)
            #expect(html.between("<p id=\"retention\">", "<") == "Events and sessions older than 90 days are deleted.")
        }
    }

    @Test func sessionsFilterByUserEventAndTime() async throws {
        try await RouterHarness.run(configure: Self.configure) { client, _ async throws in
            try await Self.seed(client)
            let cookie = try await DashboardClient.signIn(client)
            func sessions(_ query: String) async throws -> [String] {
                let html = try await DashboardClient.page(client, "/dashboard/sessions" + query, cookie: cookie)
                return html.components(separatedBy: "href=\"/dashboard/sessions/").dropFirst().compactMap {
                    $0.split(separator: "\"").first.map(String.init)
                }
            }
            #expect(try await sessions("") == ["s3", "s2", "s4", "s1"])
            #expect(try await sessions("?user=u1") == ["s2", "s1"])
            #expect(try await sessions("?user=anon-9") == ["s3"])
            #expect(try await sessions("?event=tap") == ["s3", "s2"])
            #expect(try await sessions("?event=tap&user=u1") == ["s2"])
            // Active from 00:01:00: s1 (last event at 0:08) is left out.
            #expect(try await sessions("?from=2026-01-01T00:01") == ["s3", "s2", "s4"])
            #expect(try await sessions("?to=2026-01-01T00:01:00Z") == ["s1"])

            let bad = try await DashboardClient.page(
                client, "/dashboard/sessions?from=yesterday", cookie: cookie, status: .badRequest)
            #expect(bad.contains("from: not a time: &quot;yesterday&quot;"))
            #expect(bad.contains("value=\"yesterday\""))
        }
    }

    @Test func sessionsAreListedAPageAtATime() async throws {
        try await RouterHarness.run(configure: Self.configure) { client, _ async throws in
            let messages = (0..<(SessionsPage.pageSize + 5)).map { index in
                TestMessages.track("open", session: "p\(index)", user: "many", at: Double(index))
            }
            _ = try await client.execute(
                uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey),
                body: ByteBuffer(json: TestMessages.batch(messages)))
            let cookie = try await DashboardClient.signIn(client)
            let first = try await DashboardClient.page(client, "/dashboard/sessions?user=many", cookie: cookie)
            #expect(first.occurrences(of: "href=\"/dashboard/sessions/p") == SessionsPage.pageSize)
            let next = try #require(first.between("<p class=\"pager\"><a href=\"", "\""))
            #expect(next.contains("user=many"))
            let second = try await DashboardClient.page(
                client, next.replacingOccurrences(of: "&amp;", with: "&"), cookie: cookie)
            #expect(second.occurrences(of: "href=\"/dashboard/sessions/p") == 5)
            #expect(!second.contains("class=\"pager\""))
        }
    }

    @Test func timelineShowsEventsInOrderWithEscapedProperties() async throws {
        try await RouterHarness.run(configure: Self.configure) { client, _ async throws in
            try await Self.seed(client)
            let cookie = try await DashboardClient.signIn(client)
            let html = try await DashboardClient.page(client, "/dashboard/sessions/s1", cookie: cookie)
            #expect(html.between("id=\"session-user\">", "<") == "u1")
            let names = html.components(separatedBy: "<li class=\"event\" data-event=\"").dropFirst().compactMap {
                $0.split(separator: "\"").first.map(String.init)
            }
            #expect(names.count == 13)
            #expect(names.filter { $0 == "screen_viewed" }.count == 6)
            #expect(names.last == "checkout")
            #expect(html.contains("<dt>note</dt><dd>&lt;script&gt;alert(1)&lt;/script&gt;</dd>"))
            #expect(!html.contains("<script>alert(1)"))
            #expect(html.contains("<dt>option</dt><dd>4</dd>"))

            let missing = try await DashboardClient.page(
                client, "/dashboard/sessions/nothing", cookie: cookie, status: .notFound)
            #expect(missing.contains("No events for session <code>nothing</code>"))
        }
    }

    @Test func surveysShowTheQueryAPIsNumbersAndTheConfigsProblems() async throws {
        try await RouterHarness.run(configure: Self.configure) { client, services async throws in
            try await Self.seed(client)
            let cookie = try await DashboardClient.signIn(client)
            var html = try await DashboardClient.page(client, "/dashboard/surveys", cookie: cookie)
            #expect(html.contains("id=\"config-missing\""))
            let api = try await client.execute(
                uri: "/v1/query/surveys", method: .get, headers: .bearer(RouterHarness.adminToken))
            for item in try #require(try api.json["items"]?.arrayValue) {
                let id = try #require(item["surveyId"]?.stringValue)
                let row = try #require(html.between("<tr data-survey=\"\(id)\">", "</tr>"))
                #expect(row.between("class=\"presented\">", "<") == item["presented"]?.intValue.map(String.init))
                #expect(row.between("class=\"responded\">", "<") == item["responded"]?.intValue.map(String.init))
                #expect(row.between("class=\"dismissed\">", "<") == item["dismissed"]?.intValue.map(String.init))
            }
            #expect(html.between("<tr data-survey=\"rate\">", "</tr>")?.contains("200.0 %") == true)

            // A stored config the validator (now) objects to: the page lists the problems by path.
            try await services.storage.putConfig(
                StoredConfig(
                    source: "default", kind: "surveys", body: #"{"surveys":[{"title":"<b>no id</b>"},{"id":"rate"}]}"#,
                    etag: "e1", updatedAt: 0))
            html = try await DashboardClient.page(client, "/dashboard/surveys", cookie: cookie)
            let problems = try #require(html.between("<ul id=\"config-problems\">", "</ul>"))
            #expect(problems == "<li><code>surveys[0].id</code>: missing</li>")
            #expect(html.contains("&lt;b&gt;no id&lt;/b&gt;"))

            let stored = try await client.execute(
                uri: "/v1/config/surveys", method: .put, headers: .bearer(RouterHarness.adminToken),
                body: ByteBuffer(string: Self.rateConfig))
            #expect(stored.status == .ok)
            html = try await DashboardClient.page(client, "/dashboard/surveys", cookie: cookie)
            #expect(html.contains("id=\"config-valid\""))
        }
    }

    @Test func surveyPageChartsChoicesAndPagesTextAnswersNewestFirst() async throws {
        try await RouterHarness.run(configure: Self.configure) { client, _ async throws in
            try await Self.seed(client)
            _ = try await client.execute(
                uri: "/v1/config/surveys", method: .put, headers: .bearer(RouterHarness.adminToken),
                body: ByteBuffer(string: Self.rateConfig))
            let cookie = try await DashboardClient.signIn(client)
            let rate = try await DashboardClient.page(client, "/dashboard/surveys/rate", cookie: cookie)
            #expect(rate.contains("<strong>Rate us</strong> — How was it?"))
            #expect(rate.between("<tr data-option=\"4\">", "</tr>")?.contains("<td class=\"count\">1</td>") == true)
            #expect(rate.between("<tr data-option=\"5\">", "</tr>")?.contains("<td class=\"count\">0</td>") == true)
            let chart = try #require(rate.between("id=\"choices-chart\"", "</svg>"))
            #expect(chart.contains("data-label=\"4\" data-value=\"1\""))
            #expect(chart.contains("data-label=\"3\" data-value=\"0\""))
            #expect(rate.between("<ol class=\"answers\" id=\"text-answers\">", "</ol>")?.contains("Nice") == true)

            let feedback = try await DashboardClient.page(client, "/dashboard/surveys/feedback", cookie: cookie)
            let firstPage = try #require(feedback.between("id=\"text-answers\">", "</ol>"))
            let texts = firstPage.components(separatedBy: "<blockquote>").dropFirst().compactMap {
                $0.split(separator: "<").first.map(String.init)
            }
            #expect(texts.count == SurveyDetailPage.answersPerPage)
            #expect(texts.first == "answer 24")
            #expect(texts.last == "answer 5")
            let next = try #require(feedback.between("<p class=\"pager\"><a href=\"", "\""))
            let second = try await DashboardClient.page(client, next, cookie: cookie)
            let rest = try #require(second.between("id=\"text-answers\">", "</ol>"))
            #expect(rest.occurrences(of: "<blockquote>") == 5)
            #expect(rest.contains("answer 0"))
            #expect(!rest.contains("answer 5<"))
        }
    }

    @Test func promotionShowsClickThroughPerPromotedAndPromotingApp() async throws {
        try await RouterHarness.run(configure: Self.configure) { client, _ async throws in
            try await Self.seed(client)
            _ = try await client.execute(
                uri: "/v1/batch", method: .post, headers: .basic(RouterHarness.writeKey),
                body: ByteBuffer(
                    json: TestMessages.batch([
                        TestMessages.track(
                            "promo_impression", session: "s2", properties: ["appID": "notes", "currentAppID": "photos"]),
                        TestMessages.track(
                            "promo_impression", session: "s2", properties: ["appID": "maps", "currentAppID": "mail"]),
                    ])))
            let cookie = try await DashboardClient.signIn(client)
            let html = try await DashboardClient.page(client, "/dashboard/promotion", cookie: cookie)
            let notes = try #require(html.between("<tr class=\"promoted\" data-app=\"notes\">", "</tr>"))
            #expect(notes.contains("<td class=\"impressions\">3</td><td class=\"taps\">1</td>"))
            #expect(notes.contains("<td class=\"ctr\">33.3 %</td>"))
            let promotingTable = try #require(html.between("id=\"promoting-apps\"", "</table>"))
            let mail = try #require(promotingTable.between("<tr data-app=\"mail\">", "</tr>"))
            #expect(mail.contains("<td class=\"impressions\">3</td><td class=\"taps\">1</td>"))
            let photos = try #require(promotingTable.between("<tr data-app=\"photos\">", "</tr>"))
            #expect(photos.contains("<td class=\"ctr\">0.0 %</td>"))
            #expect(html.contains("id=\"taps-chart\""))
        }
    }

    @Test func livePageNamesItsEventStream() async throws {
        try await RouterHarness.run { client, _ async throws in
            let cookie = try await DashboardClient.signIn(client)
            let html = try await DashboardClient.page(client, "/dashboard/live?source=web", cookie: cookie)
            #expect(html.contains("data-stream=\"/dashboard/live/events?source=web\""))
            #expect(html.contains("<script src=\"/dashboard/assets/dashboard.js\" defer></script>"))
            #expect(!html.contains("http://"))
            #expect(!html.contains("https://"))
        }
    }

    @Test func escapesEveryInterpolatedString() {
        let hostile = "<img src=x onerror='alert(1)'> & \"quoted\""
        let html: HTML = "<td title=\"\(hostile)\">\(hostile)</td>"
        #expect(
            html.markup
                == "<td title=\"&lt;img src=x onerror=&#39;alert(1)&#39;&gt; &amp; &quot;quoted&quot;\">&lt;img src=x onerror=&#39;alert(1)&#39;&gt; &amp; &quot;quoted&quot;</td>"
        )
        let nested: HTML = "<tr>\(html)</tr>"
        #expect(nested.markup == "<tr>" + html.markup + "</tr>")
    }
}
