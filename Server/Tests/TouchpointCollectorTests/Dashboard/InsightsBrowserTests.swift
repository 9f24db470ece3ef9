import Foundation
import Logging
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector
@testable import TouchpointCommands

/// The Funnels, Paths, Cohorts and Dashboards pages in a real headless Chromium, used as a person
/// would: pick events from the list, add a filter, show the answer, save it, put it on a
/// dashboard, open the dashboard; every number on the pages compared with the query API's.
struct InsightsBrowserTests {
    /// A collector on 127.0.0.1 holding generated traffic of the last days, and a signed-in browser.
    struct Session {
        let base: String
        let port: Int
        let adminToken: String
        let browser: HeadlessChromium
        let screenshots: URL?

        /// The query API's JSON at `path`.
        func api(_ method: String = "GET", _ path: String, body: JSONValue? = nil) throws -> JSONValue {
            var headers = [("Authorization", "Bearer \(adminToken)")]
            if body != nil { headers.append(("Content-Type", "application/json")) }
            let response = try HTTPConnection(host: "127.0.0.1", port: port, timeoutSeconds: 30).send(
                method: method, path: path, headers: headers, body: body?.jsonBytes() ?? [])
            guard (200..<300).contains(response.status) else {
                throw TestFailure(
                    "\(method) \(path): HTTP \(response.status) \(String(decoding: response.body, as: UTF8.self))")
            }
            return try JSONParser.parse(response.body)
        }

        /// Types into the field `id` as a keyboard would, over what was there.
        func type(_ text: String, into id: String) throws {
            _ = try browser.evaluate(
                "(() => { const f = document.getElementById('\(id)'); f.focus(); f.value = ''; return true })()")
            try browser.type(text, thenEnter: false)
        }

        /// Picks `value` in the select `id`, as choosing it with the keyboard does.
        func choose(_ value: String, in id: String) throws {
            let chosen = try browser.evaluate(
                "(() => { const s = document.getElementById('\(id)'); s.focus(); s.value = '\(value)'; s.dispatchEvent(new Event('change')); return s.value })()"
            )
            guard chosen == .string(value) else { throw TestFailure("\(id) has no option \(value)") }
        }

        /// Presses Enter on the submit button of the form of the field `id`, and waits for the next page.
        func submit(from id: String, thenAt path: String) throws {
            _ = try browser.evaluate(
                "document.getElementById('\(id)').form.querySelector('button[type=submit]').focus(); window.leaving = true; true"
            )
            try browser.type("", thenEnter: true)
            try browser.waitUntil(
                "!window.leaving && document.readyState === 'complete' && location.pathname.startsWith('\(path)')",
                describe: "location.href + ' ' + (document.querySelector('.problem') || {}).textContent")
        }

        /// The saved parameters the page's save box holds, as a query string.
        func savedParameters() throws -> String {
            try browser.evaluate("document.querySelector('.save input[name=parameters]').value").stringValue ?? ""
        }

        func shot(_ name: String) throws {
            guard let screenshots else { return }
            try Data(try browser.screenshot()).write(to: screenshots.appendingPathComponent("\(name).png"))
        }
    }

    /// Runs `body` with a collector holding `InsightsBrowserTests.traffic` and a browser signed in
    /// to its dashboard.
    static func withSession(_ body: @escaping @Sendable (Session) throws -> Void) async throws {
        let directory = try TemporaryDirectory(prefix: "insights-browser")
        var configuration = CollectorConfiguration(port: 0, dataDirectory: directory.appending("collector"))
        configuration.logger.logLevel = .warning
        let collector = try await CollectorServer(configuration: configuration).start()
        do {
            let stored = try await LiveClient(port: collector.port).postBatch(
                TestMessages.batch(traffic(now: Date())), writeKey: collector.writeKey)
            guard stored.status == 200 else { throw TestFailure("seeding: HTTP \(stored.status)") }
            let (base, port, token) = (collector.baseURL.absoluteString, collector.port, collector.adminToken)
            let screenshots = ProcessInfo.processInfo.environment["TOUCHPOINT_SCREENSHOTS"].map {
                URL(fileURLWithPath: $0, isDirectory: true)
            }
            if let screenshots {
                try FileManager.default.createDirectory(at: screenshots, withIntermediateDirectories: true)
            }
            try await onOwnThread { () throws in
                let browser = try HeadlessChromium(width: 1280, height: 1000)
                defer { browser.quit() }
                try browser.open(base + "/dashboard/sign-in")
                try browser.type(token, thenEnter: true)
                try browser.waitUntil("location.pathname === '/dashboard' && document.readyState === 'complete'")
                try body(Session(base: base, port: port, adminToken: token, browser: browser, screenshots: screenshots))
            }
        } catch {
            try? await collector.shutdown()
            throw error
        }
        try await collector.shutdown()
    }

    /// Forty visitors over the last four days: views, carts and purchases with a plan and an
    /// amount, half of them signing in with a plan of their own.
    static func traffic(now: Date) -> [JSONValue] {
        var random = SeededRandomNumberGenerator(seed: 470)
        var messages: [JSONValue] = []
        let plans: [JSONValue] = ["free", "pro", "team"]
        for visitor in 0..<40 {
            let anonymous = "visitor-\(visitor)"
            let user = visitor % 2 == 0 ? "user-\(visitor)" : nil
            var time = now.addingTimeInterval(-Double(random.next() % 345_600) - 3600)
            for _ in 0..<(3 + Int(random.next() % 8)) {
                let name = ["view", "view", "cart", "buy", "search"][Int(random.next() % 5)]
                var message = TestMessages.track(
                    name, session: "s-\(anonymous)", user: user, anonymous: anonymous,
                    properties: ["plan": plans[Int(random.next() % 3)], "amount": .int(Int(random.next() % 50))])
                message = message.setting("timestamp", .string(Timestamp.format(time)))
                messages.append(message)
                time.addTimeInterval(Double(30 + random.next() % 600))
            }
            if let user {
                messages.append(
                    .object([
                        "type": "identify", "messageId": .string("identify-\(visitor)"), "userId": .string(user),
                        "anonymousId": .string(anonymous), "traits": ["plan": plans[visitor % 3]],
                        "timestamp": .string(Timestamp.format(time)),
                    ]))
            }
        }
        return messages
    }

    @Test(.enabled(if: HeadlessChromium.testsRun, "needs Chromium (CHROMIUM or /usr/bin/chromium)"))
    func aFunnelIsBuiltSavedAndShownOnADashboard() async throws {
        try await Self.withSession { session in
            let browser = session.browser
            try browser.open(session.base + "/dashboard/funnels")
            let names = try browser.evaluate("[...document.querySelectorAll('#event-names option')].map(o => o.value)")
            #expect(names == ["buy", "cart", "search", "view"])
            try session.type("view", into: "step1")
            try session.type("cart", into: "step2")
            try session.type("amount", into: "step2-1-property")
            try session.choose(">", in: "step2-1-operator")
            try session.type("10", into: "step2-1-value")
            try session.type("buy", into: "step3")
            try session.type("plan", into: "breakdown")
            try session.submit(from: "step3", thenAt: "/dashboard/funnels")
            let parameters = try session.savedParameters()
            #expect(parameters.contains("steps=view%2Ccart%5Bamount%3E10%5D%2Cbuy"), "\(parameters)")
            let answer = try session.api("GET", "/v1/query/funnel?" + parameters)
            let expected = answer["steps"]?.arrayValue?.compactMap { $0["users"]?.intValue } ?? []
            #expect(expected.count == 3 && expected[0] > 0 && expected[2] > 0, "\(expected)")
            let shown = try browser.evaluate(
                "[...document.querySelectorAll('#funnel td.users')].map(c => Number(c.textContent))")
            #expect(shown == .array(expected.map { .int($0) }))
            let converted = try browser.evaluate(
                "[...document.querySelectorAll('#conversion-times tbody td')].reduce((s, c) => s + Number(c.textContent), 0)"
            )
            #expect(converted == answer["timeToConvert"]?["users"])
            let groups = try browser.evaluate(
                "Object.fromEntries([...document.querySelectorAll('#funnel-breakdown tbody tr')].map(r => [r.dataset.value, Number(r.cells[1].textContent)]))"
            )
            var expectedGroups: [String: JSONValue] = [:]
            for group in answer["groups"]?.arrayValue ?? [] {
                expectedGroups[group["value"]?.stringValue ?? "(not set)"] = group["steps"]?[0]?["users"]
            }
            #expect(groups == .object(expectedGroups))
            try session.shot("funnels")

            // Saved with a name, then put on a new dashboard.
            try session.type("Views to purchases", into: "save-name")
            try session.submit(from: "save-name", thenAt: "/dashboard/insights/")
            #expect(try browser.evaluate("document.querySelector('h1').textContent") == "Views to purchases")
            try session.choose("new", in: "dashboard")
            try session.type("Sales", into: "dashboard-name")
            try session.submit(from: "dashboard-name", thenAt: "/dashboard/boards/")
            let boardId = try #require(
                try browser.evaluate("location.pathname.split('/').pop()").stringValue.flatMap { Int($0) })
            let board = try session.api("GET", "/v1/dashboards/\(boardId)")
            #expect(board["name"] == "Sales")
            let query = try #require(board["items"]?[0]?["query"]?.stringValue)
            let again = try session.api("GET", query).self["steps"]?.arrayValue?.compactMap { $0["users"]?.intValue }
            let tile = try browser.evaluate(
                "[...document.querySelectorAll('.tile[data-insight] #funnel td.users')].map(c => Number(c.textContent))"
            )
            #expect(tile == .array((again ?? []).map { .int($0) }))
            #expect(try browser.evaluate("document.querySelectorAll('.tile form.filters').length") == 0)
            try session.shot("dashboard")
        }
    }

    @Test(.enabled(if: HeadlessChromium.testsRun, "needs Chromium (CHROMIUM or /usr/bin/chromium)"))
    func pathsAreShownSavedAndArrangedOnADashboard() async throws {
        try await Self.withSession { session in
            let browser = session.browser
            try browser.open(session.base + "/dashboard/paths")
            try session.choose("after", in: "direction")
            try session.type("view", into: "event")
            try session.choose("2", in: "steps")
            try session.submit(from: "event", thenAt: "/dashboard/paths")
            let parameters = try session.savedParameters()
            #expect(parameters.contains("start=view"))
            let answer = try session.api("GET", "/v1/query/paths?" + parameters)
            func nodes(_ node: JSONValue?, depth: Int) -> [JSONValue] {
                guard let node else { return [] }
                let here: JSONValue = .object([
                    "event": node["event"] ?? .null, "people": node["people"] ?? .null, "depth": .int(depth),
                ])
                return [here] + (node["children"]?.arrayValue ?? []).flatMap { nodes($0, depth: depth + 1) }
            }
            let expected = nodes(answer["root"], depth: 0)
            #expect(expected.count > 3)
            let shown = try browser.evaluate(
                "[...document.querySelectorAll('#path-tree li.path-node')].map(n => ({event: n.dataset.event || null, people: Number(n.dataset.people), depth: Number(n.dataset.depth)}))"
            )
            #expect(shown == .array(expected))
            try session.shot("paths")

            // Two insights on one dashboard, the second moved up, the dashboard renamed.
            try session.type("After a view", into: "save-name")
            try session.submit(from: "save-name", thenAt: "/dashboard/insights/")
            let first = try #require(try browser.evaluate("location.pathname.split('/').pop()").stringValue)
            try session.choose("new", in: "dashboard")
            try session.type("Journeys", into: "dashboard-name")
            try session.submit(from: "dashboard-name", thenAt: "/dashboard/boards/")
            let boardId = try #require(try browser.evaluate("location.pathname.split('/').pop()").stringValue)
            try browser.open(session.base + "/dashboard/paths")
            try session.choose("before", in: "direction")
            try session.type("buy", into: "event")
            try session.submit(from: "event", thenAt: "/dashboard/paths")
            try session.type("Before a purchase", into: "save-name")
            try session.submit(from: "save-name", thenAt: "/dashboard/insights/")
            let second = try #require(try browser.evaluate("location.pathname.split('/').pop()").stringValue)
            try session.choose(boardId, in: "dashboard")
            try session.submit(from: "dashboard", thenAt: "/dashboard/boards/\(boardId)")
            _ = try browser.evaluate(
                "document.querySelector('.tile[data-insight=\"\(second)\"] button[value=up]').focus(); window.leaving = true; true"
            )
            try browser.type("", thenEnter: true)
            try browser.waitUntil("!window.leaving && document.readyState === 'complete'")
            #expect(
                try session.api("GET", "/v1/dashboards/\(boardId)")["insights"] == [
                    .int(Int(second)!), .int(Int(first)!),
                ])
            let tiles = try browser.evaluate(
                "[...document.querySelectorAll('.tile[data-insight]')].map(t => t.dataset.insight)")
            #expect(tiles == [.string(second), .string(first)])
            let roots = try browser.evaluate(
                "[...document.querySelectorAll('.tile #path-tree > li')].map(n => Number(n.dataset.people))")
            var expectedRoots: [JSONValue] = []
            for insight in try session.api("GET", "/v1/dashboards/\(boardId)")["items"]?.arrayValue ?? [] {
                expectedRoots.append(try session.api("GET", insight["query"]?.stringValue ?? "")["people"] ?? .null)
            }
            #expect(roots == .array(expectedRoots))
            try session.type("Customer journeys", into: "board-name")
            try session.submit(from: "board-name", thenAt: "/dashboard/boards/\(boardId)")
            #expect(try session.api("GET", "/v1/dashboards/\(boardId)")["name"] == "Customer journeys")
            try browser.open(session.base + "/dashboard/boards")
            try session.shot("dashboards")
        }
    }

    @Test(.enabled(if: HeadlessChromium.testsRun, "needs Chromium (CHROMIUM or /usr/bin/chromium)"))
    func aCohortIsDefinedListedAndUsedAsAFilter() async throws {
        try await Self.withSession { session in
            let browser = session.browser
            try browser.open(session.base + "/dashboard/cohorts")
            try session.type("Viewers on pro", into: "cohort-name")
            try session.type("view", into: "event")
            try session.type("2", into: "times")
            try session.type("7", into: "days")
            try session.type("plan", into: "trait-1-property")
            try session.choose("=", in: "trait-1-operator")
            try session.type("pro", into: "trait-1-value")
            try session.submit(from: "cohort-name", thenAt: "/dashboard/cohorts/")
            let id = try #require(try browser.evaluate("location.pathname.split('/').pop()").stringValue)
            let cohort = try session.api("GET", "/v1/cohorts/\(id)")
            #expect(cohort["conditions"]?[0]?["atLeast"] == 2)
            #expect(
                try browser.evaluate("document.getElementById('cohort-size').textContent")
                    == .string("\(cohort["size"]?.intValue ?? -1)"))
            #expect((cohort["size"]?.intValue ?? 0) > 0)
            let members = try session.api("GET", "/v1/cohorts/\(id)/members")["items"]?.arrayValue ?? []
            let shown = try browser.evaluate(
                "[...document.querySelectorAll('#members tbody th a')].map(a => a.textContent)")
            #expect(shown == .array(members.compactMap { $0["id"] }))
            try session.shot("cohort")

            // From the cohort's page to a funnel of its people.
            _ = try browser.evaluate(
                "[...document.querySelectorAll('ul.links a')].find(a => a.textContent === 'Funnel').focus(); window.leaving = true; true"
            )
            try browser.type("", thenEnter: true)
            try browser.waitUntil(
                "!window.leaving && document.readyState === 'complete' && location.pathname === '/dashboard/funnels'")
            #expect(try browser.evaluate("document.getElementById('cohort').value") == .string(id))
            try session.type("view", into: "step1")
            try session.type("buy", into: "step2")
            try session.submit(from: "step2", thenAt: "/dashboard/funnels")
            let parameters = try session.savedParameters()
            #expect(parameters.contains("cohort=\(id)"))
            let answer = try session.api("GET", "/v1/query/funnel?" + parameters)
            let everyone = try session.api("GET", "/v1/query/funnel?steps=view,buy")
            #expect(answer["steps"]?[0]?["users"] == cohort["size"])
            #expect((everyone["steps"]?[0]?["users"]?.intValue ?? 0) > (answer["steps"]?[0]?["users"]?.intValue ?? 0))
            let people = try browser.evaluate(
                "[...document.querySelectorAll('#funnel td.users')].map(c => Number(c.textContent))")
            #expect(people == .array((answer["steps"]?.arrayValue ?? []).compactMap { $0["users"] }))
            try browser.open(session.base + "/dashboard/cohorts")
            #expect(
                try browser.evaluate("document.querySelector('#cohorts tr[data-cohort=\"\(id)\"] .size').textContent")
                    == .string("\(cohort["size"]?.intValue ?? -1)"))
            try session.shot("cohorts")
        }
    }
}

extension JSONValue {
    /// The object with `member` set to `value`.
    func setting(_ member: String, _ value: JSONValue) -> JSONValue {
        guard case .object(var members) = self else { return self }
        members[member] = value
        return .object(members)
    }
}
