import Foundation
import Logging
import Testing
import Touchpoint
import TouchpointTesting

/// `TouchpointSDK.start(writeKey:collector:)` against a real collector: one call, and delivery,
/// the surveys' remote config, the promo catalog, the store's backend scopes and the app's
/// lifecycle all reach the same collector with the same write key.
///
/// Serialized: the setup call sets process-wide defaults (the promo catalog URL, the shared survey
/// manager, the shared dispatcher) that these tests read; ``ProcessDefaults`` keeps them from
/// FacadeEndToEndTests' setups, which run in the same process.
@Suite(.serialized)
struct SetupCallTests {
    static let surveys = """
        {"surveys": [{"id": "ask_rating", "title": "Quick question", "message": "How was it?",
          "response": {"type": "options", "options": ["Great", "Poor"]},
          "trigger": {"event": {"name": "checkout_success"}}}]}
        """

    /// A recorder over a fresh directory and options that follow a hand-driven lifecycle.
    struct App {
        let directory: TemporaryDirectory
        let recorder: EventRecorder
        let lifecycle = ManualAppLifecycle()

        init() throws {
            directory = try TemporaryDirectory(prefix: "setup-call")
            var configuration = EventRecorderConfiguration()
            configuration.logger.logLevel = .warning
            recorder = EventRecorder(directory: directory.url, configuration: configuration)
        }

        /// Delivery on a timer far away, so only the background sends; no reachability monitor.
        func options(endsSessionInBackground: Bool = true) -> TouchpointSDK.Options {
            var delivery = DeliveryConfiguration()
            delivery.dispatchInterval = 3600
            delivery.reachability = nil
            delivery.maximumRequestsPerMinute = nil
            delivery.logger.logLevel = .critical
            return TouchpointSDK.Options(
                recorder: recorder, delivery: delivery, lifecycle: lifecycle,
                endsSessionInBackground: endsSessionInBackground)
        }
    }

    @Test func oneCallWiresEveryModuleToTheCollector() async throws {
        try await ProcessDefaults.exclusively {
            let collector = try await LiveCollector.start()
            try await collector.putConfig("surveys", Self.surveys)
            try await collector.putConfig("catalog", PromoCatalogs.seedQuickStart)
            let app = try App()
            let sdk = try TouchpointSDK.start(
                writeKey: collector.writeKey, collector: URL(string: collector.baseURL.absoluteString + "/")!,
                options: app.options())
            #expect(TouchpointSDK.current === sdk)
            #expect(EventDispatcher.shared === sdk.dispatcher)
            #expect(SurveyConfigManager.shared === sdk.surveys)
            #expect(sdk.surveyConfigURL.absoluteString == collector.baseURL.absoluteString + "/v1/config/surveys")

            // Surveys: the collector's config replaces the empty initial one.
            #expect(await eventually { sdk.surveys.config.surveys.map(\.id) == ["ask_rating"] })

            // Cross-promotion: the seed's `MoreAppsView(currentAppID:)` makes exactly this config.
            let apps = try await Self.promoApps(currentAppID: "myapp1", recorder: app.recorder)
            #expect(apps == ["myapp2"])

            // The store: a signed-in user's backend scope pushed through the setup's store is on the
            // collector, as that user's document.
            let store = sdk.makeStore(appID: "com.example.shop", user: LiveCollector.user("u1"))
            let sync = store.backendSync(namespace: "acme", scenarioID: "checkout")
            sync.store.set("cart.coupon", "SPRING")
            try await sync.push()
            let document = try await sdk.storeBackend(for: LiveCollector.user("u1"))
                .pull(namespace: "acme", scenarioID: "checkout")
            #expect(document?.values["cart"] == ["coupon": "SPRING"])
            #expect(try await sdk.storeBackend.pull(namespace: "acme", scenarioID: "checkout") == nil)

            // Delivery and the lifecycle: going to the background sends what is pending and ends the session.
            let session = await app.recorder.startSession(userID: "u1")
            let event = try #require(app.recorder.record("checkout_success", properties: ["amount": 80]))
            #expect(try await collector.query("/v1/query/counts")["events"]?.intValue == 0)
            app.lifecycle.send(.didEnterBackground)
            #expect(
                try await eventually {
                    try await collector.query("/v1/query/counts")["events"]?.intValue ?? 0 >= 4
                })
            let stored = try await collector.queryAll("/v1/query/events")
            // The automatic events come too: the launch's, and the move to the background.
            #expect(
                stored.compactMap { $0["event"]?.stringValue }.sorted() == [
                    "Application Backgrounded", "Application Installed", "Application Opened", "checkout_success",
                ])
            #expect(stored.contains { $0["messageId"]?.stringValue?.lowercased() == event.messageId.lowercased() })
            #expect(await eventually { await app.recorder.currentSession() == nil })
            #expect(await app.recorder.listAllSessions().first { $0.id == session.id }?.endedAt != nil)
            // A session the background ended hands its user to the next one.
            #expect(try #require(app.recorder.record("back")).userId == "u1")

            await sdk.shutdown()
            #expect(TouchpointSDK.current == nil)
            #expect(PromoConfig.defaultCatalogURL == nil)
            #expect(SurveyConfigManager.shared == nil)
            try await collector.stop()
        }
    }

    @Test func afterShutdownTheLifecycleIsNoLongerFollowed() async throws {
        try await ProcessDefaults.exclusively {
            let collector = try await LiveCollector.start()
            let app = try App()
            #expect(app.lifecycle.observerCount == 0)
            let sdk = try TouchpointSDK.start(
                writeKey: collector.writeKey, collector: collector.baseURL, options: app.options())
            #expect(app.lifecycle.observerCount == 1)
            await sdk.shutdown()
            #expect(app.lifecycle.observerCount == 0)
            try await collector.stop()
        }
    }

    @Test func aSecondStartReplacesTheFirst() async throws {
        try await ProcessDefaults.exclusively {
            let collector = try await LiveCollector.start()
            let app = try App()
            let first = try TouchpointSDK.start(
                writeKey: collector.writeKey, collector: collector.baseURL, options: app.options())
            let second = try TouchpointSDK.start(
                writeKey: collector.writeKey, collector: collector.baseURL, options: app.options())
            #expect(TouchpointSDK.current === second)
            #expect(EventDispatcher.shared === second.dispatcher)
            // Shutting the replaced setup down leaves the current one's defaults alone.
            await first.shutdown()
            #expect(TouchpointSDK.current === second)
            #expect(PromoConfig.defaultCatalogURL == second.catalogURL)
            await second.shutdown()
            #expect(PromoConfig.defaultCatalogURL == nil)
            try await collector.stop()
        }
    }

    @Test(arguments: [
        ("", "http://127.0.0.1:1", "writeKey", "is empty"),
        ("wk with space", "http://127.0.0.1:1", "writeKey", "printable ASCII"),
        ("wk", "ftp://127.0.0.1/", "collector", "ftp://127.0.0.1/ is not an http or https URL"),
        ("wk", "file:///tmp/collector", "collector", "is not an http or https URL with a host"),
    ])
    func badArgumentsAreRefusedByName(writeKey: String, collector: String, argument: String, reason: String)
        async throws
    {
        try await ProcessDefaults.exclusively {
            let app = try App()
            do throws(TouchpointSDK.SetupError) {
                try TouchpointSDK.start(writeKey: writeKey, collector: URL(string: collector)!, options: app.options())
                Issue.record("start accepted writeKey \(writeKey.debugDescription) and collector \(collector)")
            } catch {
                #expect(error.argument == argument)
                #expect(error.reason.contains(reason), "\(error)")
                #expect(error.description.hasPrefix("TouchpointSDK.start: \(argument): "))
            }
            #expect(TouchpointSDK.current == nil)
        }
    }

    /// The apps `MoreAppsView(currentAppID:)` would list: its config is `PromoConfig(currentAppID:)`.
    @MainActor
    static func promoApps(currentAppID: String, recorder: EventRecorder) async throws -> [String] {
        let service = PromoService(config: PromoConfig(currentAppID: currentAppID), recorder: recorder)
        await service.loadApps()
        if let error = service.error { throw TestFailure("the catalog did not load: \(error)") }
        return service.apps.map(\.id)
    }
}
