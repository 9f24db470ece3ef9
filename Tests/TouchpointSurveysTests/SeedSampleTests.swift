import Foundation
import Testing
import Touchpoint
import TouchpointTesting

/// The seed README's survey samples, as an app writes them. Bundle lookups are replaced by the
/// fixture file; the SwiftUI samples are parse-checked.
struct SeedSampleTests {
    /// "Or validate in Swift: load to SurveyConfig with try JSONDecoder().decode(…)".
    @Test func decodingTheSeedsConfig() throws {
        let data = Data(try Fixture.seedBytes)
        let config = try JSONDecoder().decode(SurveyConfig.self, from: data)
        #expect(config.surveys.count == 2)
    }

    /// "Loading JSON config from your bundle".
    @Test func loadingFromAFile() throws {
        let url = try Fixture.seedURL
        let config = try SurveyConfig.from(url: url)
        #expect(config.surveys.first?.id == "ask_rating")
    }

    /// "Remote config with live updates", verbatim but for the bundle lookup. Compiled, never
    /// called: it would write to the user's data directory and reach example.com.
    func remoteSampleAsWritten() throws {
        let initial = try SurveyConfig.from(url: try Fixture.seedURL)
        let manager = SurveyConfigManager(initial: initial)
        manager.startAutoRefresh(url: URL(string: "https://example.com/survey.json")!, interval: 300)
    }

    /// The same sample, run against a local server and a temporary cache.
    @Test func remoteSampleAgainstALocalServer() async throws {
        let server = try TestHTTPServer { _ in
            .json([
                "surveys": [
                    [
                        "id": "remote", "title": "T", "message": "M", "options": ["A"],
                        "trigger": ["event": ["name": "e"]],
                    ]
                ]
            ])
        }
        let directory = try TemporaryDirectory()
        let initial = try SurveyConfig.from(url: try Fixture.seedURL)
        let manager = SurveyConfigManager(initial: initial, cacheDirectory: directory.path, notificationQueue: nil)
        manager.startAutoRefresh(url: server.url("/survey.json"), interval: 300)
        defer { manager.stopAutoRefresh() }
        let stream = manager.updates()
        let remote = await withTimeout(60) { await stream.first { $0.surveys.first?.id == "remote" } }
        #expect(remote??.surveys.map(\.id) == ["remote"])
    }

    @Test func theSwiftUISamplesAndTouchpointUIParse() async throws {
        let swiftc = try #require(ChildProcess.onPath("swiftc"), "swiftc is on PATH wherever swift test runs")
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let root = tests.deletingLastPathComponent().deletingLastPathComponent()
        let ui = root.appendingPathComponent("Sources/TouchpointUI/Surveys")
        let views = try FileManager.default.contentsOfDirectory(atPath: ui.path).filter { $0.hasSuffix(".swift") }
        #expect(views.count >= 2)
        let files =
            [tests.appendingPathComponent("SeedSwiftUISamples.swift").path]
            + views.map { ui.appendingPathComponent($0).path }
        let result = try await ChildProcess.run(swiftc, ["-parse"] + files, timeout: 120)
        #expect(result.status == 0, "\(result.errors)")
    }
}
