import Foundation
import Logging
import Testing
import Touchpoint
import TouchpointTesting

/// The SDK's Segment-vocabulary calls against the real collector: its identity merges, people and
/// funnels read what `identify`, `reset` and the automatic events send, as they read analytics-swift's
/// messages; opted out, it receives nothing.
///
/// Each test holds ``ProcessDefaults``: the setup call sets process-wide defaults that
/// SetupCallTests read too.
@Suite(.serialized)
struct FacadeEndToEndTests {
    /// An app over its own directory, with manual delivery and a hand-driven lifecycle.
    struct App {
        let directory: TemporaryDirectory
        let lifecycle = ManualAppLifecycle()

        init() throws {
            directory = try TemporaryDirectory(prefix: "facade-e2e")
        }

        /// Starts the SDK as a launch of `version` would.
        func start(_ collector: LiveCollector, version: String = "1.0", optedOutByDefault: Bool = false) throws
            -> TouchpointSDK
        {
            var configuration = EventRecorderConfiguration()
            configuration.logger.logLevel = .warning
            var delivery = DeliveryConfiguration()
            delivery.dispatchInterval = -1
            delivery.reachability = nil
            delivery.maximumRequestsPerMinute = nil
            delivery.logger.logLevel = .critical
            let options = TouchpointSDK.Options(
                recorder: EventRecorder(directory: directory.url, configuration: configuration), delivery: delivery,
                lifecycle: lifecycle, surveyRefreshInterval: 3600,
                application: ApplicationVersion(version: version, build: version), optedOutByDefault: optedOutByDefault)
            return try TouchpointSDK.start(writeKey: collector.writeKey, collector: collector.baseURL, options: options)
        }
    }

    /// Runs `body` with a fresh collector and app, holding ``ProcessDefaults``; stops the
    /// collector after.
    static func run(_ body: (LiveCollector, App) async throws -> Void) async throws {
        try await ProcessDefaults.exclusively {
            let collector = try await LiveCollector.start()
            do {
                try await body(collector, try App())
            } catch {
                try await collector.stop()
                throw error
            }
            try await collector.stop()
        }
    }

    /// From a day ago to a day ahead: every event recorded now.
    static var range: String {
        let formatter = ISO8601DateFormatter()
        let now = Date()
        return "from=\(formatter.string(from: now.addingTimeInterval(-86_400)))"
            + "&to=\(formatter.string(from: now.addingTimeInterval(86_400)))"
    }

    /// How many people reached each step of the funnel `steps`.
    static func funnel(_ collector: LiveCollector, _ steps: String) async throws -> [Int] {
        let funnel = try await collector.query("/v1/query/funnel?steps=\(steps)&window=1h&\(range)")
        return funnel["steps"]?.arrayValue?.map { $0["users"]?.intValue ?? -1 } ?? []
    }

    @Test func anAnonymousVisitThenIdentifyIsOnePersonInAFunnel() async throws {
        try await Self.run { collector, app in
            let sdk = try app.start(collector)
            let anonymousId = sdk.anonymousId
            sdk.track("browse")
            sdk.identify(userId: "u-1", traits: ["plan": "pro"])
            sdk.track("buy")
            try await sdk.flush(timeout: 60)

            #expect(try await Self.funnel(collector, "browse,buy") == [1, 1])
            let person = try await collector.query("/v1/query/users/u-1")
            #expect(person["anonymousIds"] == .array([.string(anonymousId)]))
            #expect(person["traits"]?["plan"] == "pro")
            await sdk.shutdown()
        }
    }

    @Test func identifyThenResetGivesTwoPeople() async throws {
        try await Self.run { collector, app in
            let sdk = try app.start(collector)
            let first = sdk.anonymousId
            sdk.identify(userId: "u-1")
            sdk.track("browse")
            sdk.reset()
            let second = sdk.anonymousId
            sdk.track("browse")
            sdk.track("buy")
            try await sdk.flush(timeout: 60)

            #expect(try await Self.funnel(collector, "browse,buy") == [2, 1])
            let person = try await collector.query("/v1/query/users/u-1")
            #expect(person["anonymousIds"] == .array([.string(first)]), "the next person (\(second)) is not u-1")
            await sdk.shutdown()
        }
    }

    @Test func optedOutTheCollectorSeesNothingAndTheLogStaysEmpty() async throws {
        try await Self.run { collector, app in
            let sdk = try app.start(collector, optedOutByDefault: true)
            #expect(sdk.track("browse") == nil)
            #expect(sdk.identify(userId: "u-1") == nil)
            app.lifecycle.send(.didEnterBackground)
            app.lifecycle.send(.willEnterForeground)
            await #expect(throws: DeliveryError.self) { try await sdk.flush(timeout: 5) }
            #expect(try await collector.query("/v1/query/counts")["events"]?.intValue == 0)
            #expect(await sdk.recorder.allEvents().isEmpty)

            await sdk.optIn()
            sdk.track("agreed")
            try await sdk.flush(timeout: 60)
            let stored = try await collector.queryAll("/v1/query/events")
            #expect(stored.compactMap { $0["event"]?.stringValue } == ["agreed"])
            await sdk.shutdown()
        }
    }

    @Test func installedThenUpdatedOnANewVersionAndOpenedFromTheBackground() async throws {
        try await Self.run { collector, app in
            let first = try app.start(collector, version: "1.0")
            app.lifecycle.send(.didEnterBackground)
            app.lifecycle.send(.willEnterForeground)
            try await first.flush(timeout: 60)
            await first.shutdown()
            let second = try app.start(collector, version: "2.0")
            try await second.flush(timeout: 60)
            await second.shutdown()

            let stored = try await collector.queryAll("/v1/query/events")
            func named(_ name: String) -> [JSONValue] { stored.filter { $0["event"]?.stringValue == name } }
            #expect(named("Application Installed").map { $0["properties"]?["version"] } == ["1.0"])
            let updated = try #require(named("Application Updated").first)
            #expect(updated["properties"]?["version"] == "2.0")
            #expect(updated["properties"]?["previous_version"] == "1.0")
            #expect(updated["properties"]?["previous_build"] == "1.0")
            #expect(named("Application Updated").count == 1)
            #expect(named("Application Backgrounded").count == 1)
            let opened = named("Application Opened").compactMap { $0["properties"]?["from_background"]?.boolValue }
            #expect(opened.sorted { !$0 && $1 } == [false, false, true])
        }
    }
}
