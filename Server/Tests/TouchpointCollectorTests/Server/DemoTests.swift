import Foundation
import Logging
import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector
@testable import TouchpointCommands

/// `touchpoint demo`'s simulation against a collector in this process: what the SDK delivered is
/// what the query API reports.
struct DemoTests {
    /// A collector on an ephemeral port with the demo run against it.
    static func withDemo(
        users: Int, seed: UInt64, _ body: (RunningCollector, DemoSimulation.Report) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory(prefix: "demo")
        var configuration = CollectorConfiguration(port: 0, dataDirectory: directory.appending("collector"))
        configuration.logger.logLevel = .warning
        let collector = try await CollectorServer(configuration: configuration).start()
        do {
            let simulation = DemoSimulation(
                collector: collector.baseURL, writeKey: collector.writeKey, adminToken: collector.adminToken,
                users: users, seed: seed, interactive: false, directory: directory.appending("devices"), write: nil)
            let report = try await simulation.run()
            try await body(collector, report)
        } catch {
            try? await collector.shutdown()
            throw error
        }
        try await collector.shutdown()
    }

    @Test func theQueryAPISeesTheDemosSessionsSurveysAndPromotions() async throws {
        try await Self.withDemo(users: 4, seed: 7) { collector, report in
            #expect(report.storedSurveyConfig)
            #expect(report.storedCatalog)
            #expect(report.users == 4)
            #expect(report.adapterDeliveries > 0)
            let query = collector.services.query
            let counts = try await query.counts(source: "default")
            #expect(counts.events == report.eventsDelivered)
            #expect(counts.sessions == report.sessions)
            let sessions = try await query.sessions(source: "default", page: PageRequest(limit: 1000)).items
            #expect(Set(sessions.compactMap(\.userId)) == ["user-01", "user-02", "user-03", "user-04"])

            let surveys = try await query.surveyResults(source: "default")
            #expect(surveys.map(\.surveyId).allSatisfy { ["ask_rating", "open_feedback"].contains($0) })
            let rating = try #require(surveys.first { $0.surveyId == "ask_rating" })
            #expect(rating.presented > 0)
            for survey in surveys {
                // Every presented survey was answered or dismissed by the simulated user.
                #expect(survey.presented == survey.responded + survey.dismissed, "\(survey.surveyId)")
                #expect(survey.responded == survey.choices.values.reduce(0, +) + survey.textAnswers)
            }
            #expect(Set(rating.choices.keys).isSubset(of: ["Great", "Okay", "Poor"]))

            let promos = try await query.promoResults(source: "default")
            #expect(!promos.isEmpty)
            #expect(promos.allSatisfy { $0.taps <= $0.impressions })
            let promoting = Set(promos.flatMap(\.byPromotingApp.keys))
            #expect(promoting == ["notes", "mail", "photos", "maps"])
            // An app never promotes itself.
            #expect(promos.allSatisfy { $0.byPromotingApp[$0.appID] == nil })

            let typed = try await query.events(source: "default", filter: EventFilter(name: "app_opened"))
            #expect(typed.items.count == report.sessions)
        }
    }

    @Test func aSecondRunKeepsTheCollectorsConfigAndAddsSessions() async throws {
        let devices = try TemporaryDirectory(prefix: "demo-again")
        try await Self.withDemo(users: 1, seed: 3) { collector, first in
            let again = DemoSimulation(
                collector: collector.baseURL, writeKey: collector.writeKey, adminToken: collector.adminToken,
                users: 1, seed: 4, interactive: false,
                directory: devices.url, write: nil)
            let second = try await again.run()
            #expect(!second.storedSurveyConfig)
            #expect(!second.storedCatalog)
            let counts = try await collector.services.query.counts(source: "default")
            #expect(counts.sessions == first.sessions + second.sessions)
        }
    }

    @Test func theSameSeedSimulatesTheSameVisits() async throws {
        struct Outcome: Equatable {
            var events: Int
            var sessions: Int
            var surveys: [SurveyResult]
            var promos: [PromoResult]
        }
        func outcome(seed: UInt64) async throws -> Outcome {
            var result: Outcome?
            try await Self.withDemo(users: 3, seed: seed) { collector, _ in
                let query = collector.services.query
                let counts = try await query.counts(source: "default")
                result = Outcome(
                    events: counts.events, sessions: counts.sessions,
                    surveys: try await query.surveyResults(source: "default"),
                    promos: try await query.promoResults(source: "default"))
            }
            guard let result else { throw TestFailure("the demo produced nothing to compare") }
            return result
        }
        let first = try await outcome(seed: 9)
        #expect(try await outcome(seed: 9) == first)
        #expect(try await outcome(seed: 10) != first)
    }

    @Test func summaryNamesTheDashboard() {
        let text = DemoCommand.summary(
            DemoSimulation.Report(users: 2, sessions: 3, eventsDelivered: 40),
            dashboard: URL(string: "http://127.0.0.1:9/dashboard")!, adminToken: "tok")
        #expect(text.contains("Simulated 2 users in 3 sessions; 40 events delivered."))
        #expect(text.contains("Dashboard: http://127.0.0.1:9/dashboard"))
        #expect(text.contains("admin token: tok"))
    }
}
