import Foundation
import Testing
import Touchpoint
import TouchpointTesting

/// The facade on the started SDK, delivering to a Segment-style collector on 127.0.0.1.
///
/// Each test holds ``ProcessDefaults``: `TouchpointSDK.start` sets process-wide defaults that
/// tests in other suites read.
@Suite(.serialized)
struct FacadeTests {
    /// An app: a recorder over its own directory, a collector, a hand-driven lifecycle.
    final class App: Sendable {
        let directory: TemporaryDirectory
        let collector = TestCollector(writeKey: "wk_facade")
        let server: TestHTTPServer
        let lifecycle = ManualAppLifecycle()

        init() throws {
            directory = try TemporaryDirectory(prefix: "facade")
            server = try TestHTTPServer(handler: collector.handle)
        }

        /// Starts the SDK as a launch of `version` would: manual delivery, no reachability.
        func start(
            version: String = "1.0", optedOutByDefault: Bool = false, lifecycle: ManualAppLifecycle? = nil
        ) throws -> TouchpointSDK {
            var delivery = DeliveryConfiguration()
            delivery.dispatchInterval = -1
            delivery.reachability = nil
            delivery.maximumRequestsPerMinute = nil
            let options = TouchpointSDK.Options(
                recorder: EventRecorder(directory: directory.url), delivery: delivery,
                lifecycle: lifecycle ?? self.lifecycle,
                surveyRefreshInterval: 3600, application: ApplicationVersion(version: version, build: version),
                optedOutByDefault: optedOutByDefault)
            return try TouchpointSDK.start(writeKey: "wk_facade", collector: server.baseURL, options: options)
        }

        /// Requests for the remote config at `path` so far (`surveys`, `catalog`).
        func configRequests(_ path: String) -> Int { server.requests.filter { $0.path == "/v1/config/" + path }.count }

        /// The names (or types) of what the collector stored, in order.
        var received: [String] { collector.messages.map { $0.type == "track" ? $0.name ?? "?" : $0.type } }
    }

    @Test func segmentsCallsReachTheCollectorWithTheirIds() async throws {
        try await ProcessDefaults.exclusively {
            let app = try App()
            let sdk = try app.start()
            let anonymousId = sdk.anonymousId
            sdk.track("Product Viewed", properties: ["sku": "A-1"])
            _ = try #require(sdk.identify(userId: "u-42", traits: ["plan": "pro", "email": "a@example.com"]))
            sdk.identify(traits: ["email": .null])  // a trait set to null is removed
            sdk.track("Order Completed", properties: ["total": 30])
            sdk.screen("Cart", category: "Shop")
            sdk.group("acme", traits: ["employees": 12])
            _ = try #require(sdk.alias("u-43"))
            #expect(sdk.userId == "u-43")
            #expect(sdk.traits == ["plan": "pro"])
            try await sdk.flush(timeout: 60)

            #expect(
                app.received == [
                    "Application Installed", "Application Opened", "Product Viewed", "identify", "identify",
                    "Order Completed", "screen", "group", "alias",
                ])
            let messages = app.collector.messages
            #expect(messages.allSatisfy { $0.anonymousId == anonymousId })
            #expect(messages.map(\.userId) == [nil, nil, nil, "u-42", "u-42", "u-42", "u-42", "u-42", "u-43"])
            #expect(messages[3].properties == ["plan": "pro", "email": "a@example.com"])
            #expect(messages[6].name == "Cart")
            #expect(messages[6].properties == .object([:]), "the category is beside the name, not a property")
            #expect(ScreenViews.recorder === sdk.recorder, "SwiftUI's screen views go to the started SDK")
            await sdk.shutdown()
            #expect(ScreenViews.recorder === EventRecorder.shared)
        }
    }

    @Test func resetMakesANewAnonymousUserAndWhatCameBeforeKeepsItsIds() async throws {
        try await ProcessDefaults.exclusively {
            let app = try App()
            let sdk = try app.start()
            let before = sdk.anonymousId
            sdk.identify(userId: "u-1", traits: ["plan": "pro"])
            sdk.track("Signed Out")
            sdk.reset()
            #expect(sdk.userId == nil)
            #expect(sdk.traits.isEmpty)
            let after = sdk.anonymousId
            #expect(after != before)
            let visit = try #require(sdk.track("Browsed"))
            #expect(visit.userId == nil && visit.anonymousId == after)
            try await sdk.flush(timeout: 60)
            let messages = app.collector.messages
            #expect(messages.filter { $0.name == "Signed Out" }.map(\.userId) == ["u-1"])
            #expect(messages.filter { $0.name == "Signed Out" }.map(\.anonymousId) == [before])
            #expect(messages.filter { $0.name == "Browsed" }.map(\.anonymousId) == [after])
            await sdk.shutdown()
        }
    }

    /// The analytics tools behind the routing adapters forget the user on `reset()`: the next
    /// person's events do not carry the previous one's identity to them.
    @Test func resetTellsTheRoutingAdaptersToForgetTheUser() async throws {
        try await ProcessDefaults.exclusively {
            let app = try App()
            let sdk = try app.start()
            let tracker = GlobalTracker(recorder: sdk.recorder)
            defer { tracker.stopTracking() }
            let adapter = InMemoryAdapter(name: "Mixpanel")
            tracker.startTracking(adapters: [adapter])
            sdk.identify(userId: "u-1", traits: ["plan": "pro"])
            sdk.track("Signed Out")
            sdk.reset()
            sdk.track("Browsed")
            #expect(await tracker.waitUntilDelivered(timeout: .seconds(30)))
            let tail = adapter.deliveries.drop {
                $0 != .property(identifier: "plan", value: "pro", type: "RecordedProperty")
            }
            #expect(
                Array(tail) == [
                    .property(identifier: "plan", value: "pro", type: "RecordedProperty"),
                    .event(name: "Signed Out", metadata: [:], type: "RecordedEvent"),
                    .reset,
                    .event(name: "Browsed", metadata: [:], type: "RecordedEvent"),
                ])
            await sdk.shutdown()
        }
    }

    /// `alias` while anonymous links the anonymous id: `previousId` is it (analytics-kotlin's
    /// `userId ?: anonymousId`, the Segment spec's "an Anonymous ID … or a User ID"), and the
    /// collector merges the anonymous visits into the new user.
    @Test func anAnonymousAliasNamesTheAnonymousIdAsPreviousId() async throws {
        try await ProcessDefaults.exclusively {
            let app = try App()
            let sdk = try app.start()
            let anonymousId = sdk.anonymousId
            sdk.track("Product Viewed")
            _ = try #require(sdk.alias("u-50"))
            #expect(sdk.userId == "u-50")
            _ = try #require(sdk.alias("u-51"))
            try await sdk.flush(timeout: 60)
            let aliases = app.collector.messages.filter { $0.type == "alias" }
            #expect(aliases.map(\.userId) == ["u-50", "u-51"])
            #expect(aliases.allSatisfy { $0.anonymousId == anonymousId })
            #expect(aliases.map(\.previousId) == [anonymousId, "u-50"])
            await sdk.shutdown()
        }
    }

    @Test func theAnonymousIdUserAndTraitsSurviveARelaunch() async throws {
        try await ProcessDefaults.exclusively {
            let app = try App()
            let first = try app.start()
            let anonymousId = first.anonymousId
            first.identify(userId: "u-7", traits: ["plan": "team"])
            await first.shutdown()

            let second = try app.start()
            #expect(second.anonymousId == anonymousId)
            #expect(second.userId == "u-7")
            #expect(second.traits == ["plan": "team"])
            second.reset()
            await second.shutdown()

            let third = try app.start()
            #expect(third.anonymousId != anonymousId)
            #expect(third.userId == nil)
            #expect(third.traits.isEmpty)
            await third.shutdown()
        }
    }

    @Test func optedOutNothingIsRecordedOrSentUntilOptIn() async throws {
        try await ProcessDefaults.exclusively {
            let app = try App()
            let sdk = try app.start(optedOutByDefault: true)
            #expect(sdk.isOptedOut)
            #expect(sdk.track("Tapped") == nil)
            #expect(sdk.identify(userId: "u-9") == nil)
            app.lifecycle.send(.didEnterBackground)
            await #expect(throws: DeliveryError.self) { try await sdk.flush(timeout: 5) }
            #expect(app.collector.counters.requests == 0)
            #expect(await sdk.recorder.allEvents().isEmpty, "the log stays empty")

            await sdk.optIn()
            sdk.track("Agreed")
            try await sdk.flush(timeout: 60)
            #expect(app.received == ["Agreed"], "nothing from before the opt-in, not even the launch")
            await sdk.shutdown()

            // The choice is kept: a relaunch with the same default records.
            let relaunched = try app.start(optedOutByDefault: true)
            #expect(!relaunched.isOptedOut)
            await relaunched.optOut(discardingPending: true)
            #expect(relaunched.track("Tapped") == nil)
            await relaunched.shutdown()
        }
    }

    /// Opted out, not even the remote config is fetched (it would tell the collector the app
    /// runs): the survey schedule waits, refreshes and the catalog serve what they hold. Opting in
    /// fetches again at once; opting out again stops it.
    @Test func optedOutTheRemoteConfigSendsNoRequestUntilOptIn() async throws {
        try await ProcessDefaults.exclusively {
            let app = try App()
            let sdk = try app.start(optedOutByDefault: true)
            #expect(!sdk.configGate.isOpen)
            #expect(await eventually { sdk.configGate.waiting == 1 }, "the survey schedule waits at the gate")
            await sdk.surveys.refresh(url: sdk.surveyConfigURL)
            let catalog = await PromoService(config: PromoConfig(currentAppID: "facade"), recorder: sdk.recorder)
            await catalog.loadApps()
            await catalog.forceRefresh()
            #expect(app.configRequests("surveys") == 0)
            #expect(app.configRequests("catalog") == 0)

            await sdk.optIn()
            #expect(sdk.configGate.isOpen)
            #expect(await eventually { app.configRequests("surveys") >= 1 }, "the survey config is checked at once")
            await catalog.forceRefresh()
            #expect(app.configRequests("catalog") == 1)

            await sdk.optOut()
            #expect(!sdk.configGate.isOpen)
            await catalog.forceRefresh()
            #expect(app.configRequests("catalog") == 1)
            await sdk.shutdown()
            #expect(PromoConfig.defaultCatalogGate == nil)
        }
    }

    /// Opted out, the scenario store's backends send nothing either: a pull or a push throws,
    /// naming why; after opting in they reach the collector.
    @Test func optedOutTheScenarioStoreSendsNoRequestUntilOptIn() async throws {
        try await ProcessDefaults.exclusively {
            let app = try App()
            let sdk = try app.start(optedOutByDefault: true)
            let user = sdk.storeBackend(for: HTTPStoreBackend.User(id: "u-1", signature: "00"))
            for backend in [sdk.storeBackend, user] {
                await #expect {
                    _ = try await backend.pull(namespace: "acme", scenarioID: "checkout")
                } throws: { error in
                    (error as? StoreError)?.code == .backendFailure
                        && "\(error)".contains("not sent: the user opted out of recording")
                }
                await #expect(throws: StoreError.self) {
                    _ = try await backend.push(
                        ["a": 1], namespace: "acme", scenarioID: "checkout", precondition: .ifAbsent)
                }
            }
            func scenarioRequests() -> Int { app.server.requests.filter { $0.path.contains("/scenario/") }.count }
            #expect(scenarioRequests() == 0)

            await sdk.optIn()
            // The test collector keeps no documents: the request is sent and answered, whatever the answer.
            _ = try? await sdk.storeBackend.pull(namespace: "acme", scenarioID: "checkout")
            #expect(scenarioRequests() == 1)
            await sdk.shutdown()
        }
    }

    /// An app with scenes, as UIKit's lifecycle reports it: the launch (no launch options), the
    /// scene's URL forwarded with `openURL`, then activation. `Application Opened` carries the URL.
    @Test func aSceneAppsOpenedCarriesTheURLItForwards() async throws {
        try await ProcessDefaults.exclusively {
            let app = try App()
            let lifecycle = ManualAppLifecycle(announcesLaunch: true, announcesActivation: true)
            let sdk = try app.start(lifecycle: lifecycle)
            lifecycle.send(.didFinishLaunching(url: nil, referringApplication: nil))
            sdk.openURL(URL(string: "shop://cart/42")!, referringApplication: "com.example.mail")
            lifecycle.send(.didBecomeActive)
            try await sdk.flush(timeout: 60)
            let opened = try #require(app.collector.messages.first { $0.name == "Application Opened" })
            #expect(opened.properties?["url"] == "shop://cart/42")
            #expect(opened.properties?["referring_application"] == "com.example.mail")
            #expect(opened.properties?["from_background"] == false)
            await sdk.shutdown()
        }
    }

    @Test func theLifecycleIsRecordedBeforeTheSessionEnds() async throws {
        try await ProcessDefaults.exclusively {
            let app = try App()
            let sdk = try app.start()
            let session = try #require(await sdk.recorder.currentSession())
            app.lifecycle.send(.didEnterBackground)
            #expect(await eventually { sdk.recorder.lifecycleEventsHandled == 1 })
            app.lifecycle.send(.willEnterForeground)
            let events = await sdk.recorder.allEvents()
            #expect(
                events.map(\.name) == [
                    "Application Installed", "Application Opened", "Application Backgrounded", "Application Opened",
                ])
            #expect(events[2].sessionId == session.id, "Backgrounded ends the session it belongs to")
            #expect(events[3].sessionId != session.id)
            #expect(events[3].properties["from_background"] == true)
            await sdk.shutdown()

            // A relaunch of a new version: Updated, then Opened.
            let updated = try app.start(version: "2.0")
            let names = await updated.recorder.allEvents().map(\.name).suffix(2)
            #expect(Array(names) == ["Application Updated", "Application Opened"])
            await updated.shutdown()
        }
    }
}
