import Foundation
import Logging
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector
@testable import TouchpointCommands

/// The dashboard in a real headless Chromium: a collector on 127.0.0.1 seeded by the demo's
/// simulation, signed in from the keyboard, its pages checked element by element against the
/// query API, a live event arriving over server-sent events, and a screenshot that shows them.
struct DashboardBrowserTests {
    /// What the query API says, to compare the pages with.
    struct Expected: Sendable {
        var events: Int
        var users: Set<String>
        var firstSession: String
        var firstSessionEvents: Int
        var surveys: [String: JSONValue]
        /// How many checkout_success events the events list holds.
        var checkouts: Int
    }

    static func expected(_ client: LiveClient, adminToken: String) async throws -> Expected {
        let admin = [("Authorization", "Bearer \(adminToken)")]
        let counts = try JSONParser.parse(
            try await client.send(method: "GET", path: "/v1/query/counts", headers: admin).body)
        let sessions = try JSONParser.parse(
            try await client.send(method: "GET", path: "/v1/query/sessions?limit=1000", headers: admin).body)
        let items = sessions["items"]?.arrayValue ?? []
        let first = try #require(items.first?["sessionId"]?.stringValue)
        let timeline = try JSONParser.parse(
            try await client.send(method: "GET", path: "/v1/query/sessions/\(first)/events?limit=1000", headers: admin)
                .body)
        let surveys = try JSONParser.parse(
            try await client.send(method: "GET", path: "/v1/query/surveys", headers: admin).body)
        let checkouts = try JSONParser.parse(
            try await client.send(
                method: "GET", path: "/v1/query/events?name=checkout_success&limit=1000", headers: admin
            ).body)
        var bySurvey: [String: JSONValue] = [:]
        for survey in surveys["items"]?.arrayValue ?? [] {
            if let id = survey["surveyId"]?.stringValue { bySurvey[id] = survey }
        }
        return Expected(
            events: counts["events"]?.intValue ?? -1, users: Set(items.compactMap { $0["userId"]?.stringValue }),
            firstSession: first, firstSessionEvents: timeline["items"]?.arrayValue?.count ?? -1, surveys: bySurvey,
            checkouts: checkouts["items"]?.arrayValue?.count ?? -1)
    }

    @Test(.enabled(if: HeadlessChromium.testsRun, "needs Chromium (CHROMIUM or /usr/bin/chromium)"))
    func theDashboardWorksInHeadlessChromium() async throws {
        let directory = try TemporaryDirectory(prefix: "dashboard-browser")
        var configuration = CollectorConfiguration(port: 0, dataDirectory: directory.appending("collector"))
        configuration.logger.logLevel = .warning
        let collector = try await CollectorServer(configuration: configuration).start()
        do {
            try await run(collector, directory: directory)
        } catch {
            try? await collector.shutdown()
            throw error
        }
        try await collector.shutdown()
    }

    private func run(_ collector: RunningCollector, directory: TemporaryDirectory) async throws {
        let report = try await DemoSimulation(
            collector: collector.baseURL, writeKey: collector.writeKey, adminToken: collector.adminToken, users: 5,
            seed: 11, interactive: false, directory: directory.appending("devices"), write: nil
        ).run()
        let client = LiveClient(port: collector.port)
        let expected = try await Self.expected(client, adminToken: collector.adminToken)
        #expect(expected.events == report.eventsDelivered)
        #expect(expected.users.count == 5)
        let base = collector.baseURL.absoluteString
        let (adminToken, writeKey, port) = (collector.adminToken, collector.writeKey, collector.port)
        // TOUCHPOINT_SCREENSHOTS keeps the pictures (CI artifacts); otherwise they go with the temporary directory.
        let screenshots =
            ProcessInfo.processInfo.environment["TOUCHPOINT_SCREENSHOTS"].map {
                URL(fileURLWithPath: $0, isDirectory: true)
            } ?? directory.url
        try FileManager.default.createDirectory(at: screenshots, withIntermediateDirectories: true)

        let seen = try await onOwnThread { () throws -> Observations in
            try Self.browse(
                base: base, adminToken: adminToken, writeKey: writeKey, port: port, expected: expected,
                screenshots: screenshots)
        }
        #expect(seen.focusedOnSignIn == "token", "the token field has the focus on the sign-in page")
        #expect(seen.cookieVisibleToScript == "", "the session cookie is HttpOnly")
        #expect(seen.listedUsers == expected.users)
        #expect(seen.timelineEvents == expected.firstSessionEvents)
        #expect(seen.timelineProperties > 0)
        #expect(seen.totalEvents == "\(expected.events)")
        #expect(seen.chartBars > 0)
        for (id, survey) in expected.surveys {
            for field in ["presented", "responded", "dismissed"] {
                #expect(seen.surveyCounts["\(id).\(field)"] == "\(survey[field]?.intValue ?? -1)", "\(id) \(field)")
            }
        }
        #expect(seen.configValid)
        var expectedTallies = expected.surveys["ask_rating"]?["choices"]?.objectValue ?? [:]
        for option in ["Great", "Okay", "Poor"] where expectedTallies[option] == nil { expectedTallies[option] = 0 }
        #expect(seen.tallies == .object(expectedTallies))
        #expect(seen.choiceBars == 3)
        #expect(seen.surveyShot.width == 1280 && seen.surveyShot.height == 900)
        #expect(seen.surveyShot.inkedFraction > 0.01, "the survey page screenshot is blank")
        #expect(seen.surveyShot.distinctColors() > 8)
        #expect(seen.people == expected.users.count)
        #expect(expected.checkouts > 0)
        #expect(seen.trendTotal == expected.checkouts)
        #expect(seen.trendBars > 0)
        #expect(seen.trendShot.inkedFraction > 0.01, "the trends page screenshot is blank")
        #expect(seen.liveUser == "live-user")
        #expect(seen.liveShot.inkedFraction > 0.01)
        #expect(seen.phoneFits, "the page scrolls sideways at 375 px")
        #expect(seen.phoneShot.width == 375)
        #expect(seen.phoneShot.inkedFraction > 0.01)
    }

    /// What the browser showed.
    struct Observations: Sendable {
        var focusedOnSignIn: JSONValue = .null
        var cookieVisibleToScript: JSONValue = .null
        var listedUsers: Set<String> = []
        var timelineEvents = 0
        var timelineProperties = 0
        var totalEvents = ""
        var chartBars = 0
        var surveyCounts: [String: String] = [:]
        var configValid = false
        var tallies: JSONValue = .null
        var choiceBars = 0
        var surveyShot: PNGImage
        var people = 0
        var trendTotal = 0
        var trendBars = 0
        var trendShot: PNGImage
        var liveUser: JSONValue = .null
        var liveShot: PNGImage
        var phoneFits = false
        var phoneShot: PNGImage
    }

    /// Drives the browser through the dashboard (blocking; on a thread of its own).
    static func browse(
        base: String, adminToken: String, writeKey: String, port: Int, expected: Expected, screenshots: URL
    ) throws -> Observations {
        let browser = try HeadlessChromium(width: 1280, height: 900)
        defer { browser.quit() }

        // Signed out, the dashboard sends the browser to the sign-in page; the token field has
        // the focus, so typing the token and Enter signs in.
        try browser.open(base + "/dashboard/sessions")
        try browser.waitUntil("location.pathname === '/dashboard/sign-in'")
        let focused = try browser.evaluate("document.activeElement && document.activeElement.id")
        try browser.type(adminToken, thenEnter: true)
        try browser.waitUntil("location.pathname === '/dashboard/sessions' && document.readyState === 'complete'")
        let cookie = try browser.evaluate("document.cookie")

        // Sessions: the demo users.
        let users = try browser.evaluate(
            "[...document.querySelectorAll('#sessions tbody td.user')].map(cell => cell.textContent)")

        // The newest session's timeline, opened from the list with the keyboard.
        _ = try browser.evaluate("document.querySelector('#sessions tbody a').focus(); true")
        try browser.type("", thenEnter: true)
        try browser.waitUntil(
            // The whole page parsed, not only the list's start: a page arrives in several reads.
            "location.pathname === '/dashboard/sessions/\(expected.firstSession)' && !!document.getElementById('timeline') && document.readyState === 'complete'"
        )
        let timelineEvents = try browser.evaluate("document.querySelectorAll('#timeline li.event').length")
        let timelineProperties = try browser.evaluate("document.querySelectorAll('#timeline dl dt').length")
        try Data(try browser.screenshot()).write(to: screenshots.appendingPathComponent("timeline.png"))

        // Overview.
        try browser.open(base + "/dashboard")
        let total = try browser.evaluate("document.getElementById('total-events').textContent")
        let bars = try browser.evaluate("document.querySelectorAll('#activity-chart rect.bar').length")
        try Data(try browser.screenshot()).write(to: screenshots.appendingPathComponent("overview.png"))

        // Surveys.
        try browser.open(base + "/dashboard/surveys")
        var counts: [String: String] = [:]
        for id in expected.surveys.keys {
            for field in ["presented", "responded", "dismissed"] {
                counts["\(id).\(field)"] = try browser.evaluate(
                    "document.querySelector('tr[data-survey=\"\(id)\"] .\(field)').textContent"
                ).stringValue
            }
        }
        let configValid = try browser.evaluate("!!document.getElementById('config-valid')")
        try browser.open(base + "/dashboard/surveys/ask_rating")
        let tallies = try browser.evaluate(
            "Object.fromEntries([...document.querySelectorAll('#choice-tallies tbody tr')].map(row => [row.dataset.option, Number(row.querySelector('.count').textContent)]))"
        )
        let choiceBars = try browser.evaluate("document.querySelectorAll('#choices-chart rect.bar').length")
        let surveyPNG = try browser.screenshot()
        try Data(surveyPNG).write(to: screenshots.appendingPathComponent("survey.png"))

        // People: one row per demo user; a trend of checkouts whose table adds up to the events list.
        try browser.open(base + "/dashboard/people")
        let people = try browser.evaluate("document.querySelectorAll('#people tbody tr').length")
        try browser.open(base + "/dashboard/trends?event=checkout_success&interval=hour&display=bar")
        let trendTotal = try browser.evaluate(
            "[...document.querySelectorAll('#trend tbody tr:not(.total)')].reduce((sum, row) => sum + Number(row.cells[1].textContent), 0)"
        )
        let trendBars = try browser.evaluate(
            "[...document.querySelectorAll('#trend-chart rect.bar')].filter(bar => Number(bar.getAttribute('height')) > 0).length"
        )
        let trendPNG = try browser.screenshot()
        try Data(trendPNG).write(to: screenshots.appendingPathComponent("trends.png"))

        // Live: an event posted now appears without a reload.
        try browser.open(base + "/dashboard/live")
        try browser.waitUntil("document.getElementById('live-status').dataset.state === 'open'")
        let batch = TestMessages.batch([
            TestMessages.track("browser_live_check", session: "browser", user: "live-user", properties: ["n": 1])
        ])
        let stored = try HTTPConnection(host: "127.0.0.1", port: port, timeoutSeconds: 20).send(
            method: "POST", path: "/v1/batch", headers: [("Authorization", TestMessages.basic(writeKey))], body: batch)
        guard stored.status == 200 else { throw TestFailure("posting the live event: HTTP \(stored.status)") }
        try browser.waitUntil(
            "[...document.querySelectorAll('#live-events tbody td.name')].some(cell => cell.textContent === 'browser_live_check')",
            describe: "document.getElementById('live-events').outerHTML")
        let liveUser = try browser.evaluate("document.querySelector('#live-events tbody td.user').textContent")
        let livePNG = try browser.screenshot()
        try Data(livePNG).write(to: screenshots.appendingPathComponent("live.png"))

        // Phone width: nothing but the scrolling tables may be wider than the screen.
        try browser.call(
            "Emulation.setDeviceMetricsOverride",
            ["width": 375, "height": 740, "deviceScaleFactor": 1, "mobile": true],
            page: true)
        try browser.open(base + "/dashboard/surveys/ask_rating")
        let fits = try browser.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        let phonePNG = try browser.screenshot()
        try Data(phonePNG).write(to: screenshots.appendingPathComponent("survey-phone.png"))

        return Observations(
            focusedOnSignIn: focused, cookieVisibleToScript: cookie,
            listedUsers: Set(users.arrayValue?.compactMap(\.stringValue) ?? []),
            timelineEvents: timelineEvents.intValue ?? -1, timelineProperties: timelineProperties.intValue ?? -1,
            totalEvents: total.stringValue ?? "", chartBars: bars.intValue ?? -1, surveyCounts: counts,
            configValid: configValid == .bool(true), tallies: tallies, choiceBars: choiceBars.intValue ?? -1,
            surveyShot: try PNGImage(surveyPNG), people: people.intValue ?? -1, trendTotal: trendTotal.intValue ?? -1,
            trendBars: trendBars.intValue ?? -1, trendShot: try PNGImage(trendPNG), liveUser: liveUser,
            liveShot: try PNGImage(livePNG),
            phoneFits: fits == .bool(true), phoneShot: try PNGImage(phonePNG))
    }
}
