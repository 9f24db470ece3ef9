// Runs the README's samples (ReadmeSamples.swift) against a real recorder in a temporary folder
// and checks what the fake SDKs received. Compiled in Swift 6 mode here and in Swift 5 mode in
// TouchpointRoutingSwift5SampleTests, through a symbolic link.
import Foundation
import Testing
import Touchpoint
import TouchpointTesting

/// A recorder in its own temporary folder and a tracker routing from it.
struct SampleHarness {
    let directory: TemporaryDirectory
    let recorder: EventRecorder
    let tracker: GlobalTracker

    init() throws {
        directory = try TemporaryDirectory(prefix: "routing-samples")
        recorder = EventRecorder(directory: directory.url)
        tracker = GlobalTracker(recorder: recorder)
    }

    /// Runs README code with `tracker` as the global tracker.
    func run(_ body: () -> Void) {
        GlobalTracker.$scoped.withValue(tracker, operation: body)
    }

    /// Waits for the adapters, failing the test if they do not finish in time.
    func delivered() async -> Bool {
        await tracker.waitUntilDelivered(timeout: .seconds(20))
    }

    func loggedNames() async -> [String] {
        await recorder.allEvents().map(\.name)
    }
}

@Suite(.timeLimit(.minutes(2)))
struct ReadmeSampleTests {
    @Test func quickStartEventReachesTheAdapterAndTheLog() async throws {
        let harness = try SampleHarness()
        defer { harness.tracker.stopTracking() }
        let mixpanel = MixpanelSDK()
        harness.run {
            GlobalTracker.startTracking(adapters: [MixpanelAdapter(token: "abcd", sdk: mixpanel)])
            Events.App.Opened(appName: "My App").trigger()
        }
        #expect(await harness.delivered())
        #expect(mixpanel.token == "abcd")
        #expect(mixpanel.tracked == [MixpanelSDK.Tracked(event: "App: Opened", properties: ["name": "My App"])])
        #expect(await harness.loggedNames() == ["App: Opened"])
    }

    @Test func eventsTriggeredBeforeStartArriveInOrderAfterConfigure() async throws {
        let harness = try SampleHarness()
        defer { harness.tracker.stopTracking() }
        let mixpanel = MixpanelSDK()
        harness.run {
            Events.User.LoggedIn().trigger()
            Events.User.ProfileUpdated(newName: "Alfred").trigger()
            Events.User.LoggedOut().trigger()
            GlobalTracker.startTracking(adapters: [MixpanelAdapter(token: "abcd", sdk: mixpanel)])
        }
        #expect(await harness.delivered())
        #expect(
            mixpanel.tracked == [
                MixpanelSDK.Tracked(event: "User: Logged In", properties: [:]),
                MixpanelSDK.Tracked(event: "User: Profile Updated", properties: ["new_name": "Alfred"]),
                MixpanelSDK.Tracked(event: "User: Logged Out", properties: [:]),
            ])
    }

    @Test func appOpenMetadataUsesTheFormatter() async throws {
        let harness = try SampleHarness()
        defer { harness.tracker.stopTracking() }
        let mixpanel = MixpanelSDK()
        harness.run {
            GlobalTracker.startTracking(adapters: [MixpanelAdapter(token: "abcd", sdk: mixpanel)])
            AppOpen(timestamp: Date(timeIntervalSince1970: 1_767_225_600)).trigger()
        }
        #expect(await harness.delivered())
        #expect(
            mixpanel.tracked == [MixpanelSDK.Tracked(event: "App: Open", properties: ["timestamp": "2026-01-01 00:00"])]
        )
    }

    @Test func propertyUpdateGoesToPeopleAndIntoTheTraits() async throws {
        let harness = try SampleHarness()
        defer { harness.tracker.stopTracking() }
        let mixpanel = MixpanelSDK()
        harness.run {
            GlobalTracker.startTracking(adapters: [MixpanelAdapter(token: "abcd", sdk: mixpanel)])
            Email(value: "test@test.com").update()
            PlanProperty(value: .pro).update()
        }
        #expect(await harness.delivered())
        let sets = mixpanel.people.sets
        #expect(sets.map(\.property) == ["email", "plan"])
        #expect(sets.map(\.value) == [.string("test@test.com"), .string("pro")])
        #expect(mixpanel.tracked.isEmpty)
        #expect(await harness.tracker.traits(forUserID: nil) == ["email": "test@test.com", "plan": "pro"])
        let logged = await harness.recorder.allEvents()
        #expect(logged.map(\.type) == [.identify, .identify])
        #expect(logged.map(\.properties) == [["email": "test@test.com"], ["plan": "pro"]])
    }

    @Test func boundEventFollowsItsProperty() async throws {
        let harness = try SampleHarness()
        defer { harness.tracker.stopTracking() }
        let mixpanel = MixpanelSDK()
        harness.run {
            GlobalTracker.startTracking(adapters: [MixpanelAdapter(token: "abcd", sdk: mixpanel)])
            BoundEmail(value: "new@test.com").update()
        }
        #expect(await harness.delivered())
        #expect(mixpanel.people.sets.map(\.property) == ["email"])
        #expect(
            mixpanel.tracked == [
                MixpanelSDK.Tracked(event: "User: Changed - Email", properties: ["new_email": "new@test.com"])
            ])
        #expect(await harness.loggedNames() == ["identify", "User: Changed - Email"])
    }

    @Test func prohibitRuleKeepsAppOpenFromMixpanel() async throws {
        let harness = try SampleHarness()
        defer { harness.tracker.stopTracking() }
        let mixpanel = MixpanelSDK()
        harness.run {
            GlobalTracker.startTracking(adapters: [ProhibitSample.MixpanelAdapter(token: "abcd", sdk: mixpanel)])
            AppOpen(timestamp: Date()).trigger()
            Events.App.Opened(appName: "My App").trigger()
        }
        #expect(await harness.delivered())
        #expect(mixpanel.trackedNames == ["App: Opened"])
        #expect(harness.tracker.statistics[adapter: "MixpanelAdapter"]?.skippedByRule == 1)
    }

    @Test func allowRulePassesOnlyTheListedEvents() async throws {
        let harness = try SampleHarness()
        defer { harness.tracker.stopTracking() }
        let mixpanel = MixpanelSDK()
        harness.run {
            GlobalTracker.startTracking(adapters: [AllowSample.MixpanelAdapter(sdk: mixpanel)])
            AppOpen(timestamp: Date()).trigger()
            Events.App.Opened(appName: "My App").trigger()
            Events.User.LoggedIn().trigger()
            Events.User.LoggedOut().trigger()
        }
        #expect(await harness.delivered())
        #expect(mixpanel.trackedNames == ["App: Opened", "User: Logged In"])
    }

    @Test func intercomSwitchHandlesEachProperty() async throws {
        let harness = try SampleHarness()
        defer { harness.tracker.stopTracking() }
        let intercom = IntercomSDK()
        let token = Data([0xDE, 0xAD, 0xBE, 0xEF])
        harness.run {
            GlobalTracker.startTracking(adapters: [IntercomAdapter(sdk: intercom)])
            Property.Email(value: "test@test.com").update()
            Property.PushNotificationToken(value: token).update()
            Property.Nickname(value: "Al").update()
            Property.Nickname(value: nil).update()
        }
        #expect(await harness.delivered())
        #expect(
            intercom.calls == [
                .updateUser(email: "test@test.com", customAttributes: nil),
                .setDeviceToken(token),
                .updateUser(email: nil, customAttributes: ["nickname": "Al"]),
                .updateUser(email: nil, customAttributes: ["nickname": ""]),
            ])
        #expect(
            await harness.tracker.traits(forUserID: nil) == [
                "email": "test@test.com", "push_token": .string(token.base64EncodedString()),
            ])
    }

    @Test func infoLoggingPrintsTheSeedLine() async throws {
        let harness = try SampleHarness()
        defer { harness.tracker.stopTracking() }
        let intercom = IntercomSDK()
        let swiftyBeaver = SwiftyBeaverLog()
        harness.run {
            GlobalTracker.loggingLevel = .info  // default is .none
            GlobalTracker.log { message in
                swiftyBeaver.info(message)  // Log with your favourite logging system
            }
            GlobalTracker.startTracking(adapters: [IntercomAdapter(sdk: intercom)])
            Events.EventDetail.Viewed(eventId: 21421, state: "rendering").trigger()
        }
        #expect(await harness.delivered())
        #expect(swiftyBeaver.messages == ["-[Intercom]: EVENT TRIGGERED - 'Event Detail: Viewed'"])
    }

    @Test func verboseLoggingAddsTheMetadata() async throws {
        let harness = try SampleHarness()
        defer { harness.tracker.stopTracking() }
        let intercom = IntercomSDK()
        let swiftyBeaver = SwiftyBeaverLog()
        harness.run {
            GlobalTracker.loggingLevel = .verbose
            GlobalTracker.log { message in
                swiftyBeaver.info(message)
            }
            GlobalTracker.startTracking(adapters: [IntercomAdapter(sdk: intercom)])
            Events.EventDetail.Viewed(eventId: 21421, state: "rendering").trigger()
        }
        #expect(await harness.delivered())
        #expect(
            swiftyBeaver.messages == [
                "-[Intercom]: EVENT TRIGGERED - 'Event Detail: Viewed'\n > event_id: 21421\n > state: rendering"
            ])
        #expect(
            intercom.calls == [.logEvent("Event Detail: Viewed", ["event_id": .int(21421), "state": "rendering"])])
    }

    @Test func appDelegateStartsTrackingOnTheMainActor() async throws {
        let harness = try SampleHarness()
        defer { harness.tracker.stopTracking() }
        let mixpanel = MixpanelSDK()
        await GlobalTracker.$scoped.withValue(harness.tracker) {
            let delegate = await AppDelegate(mixpanel: mixpanel)
            await delegate.applicationDidFinishLaunching()
        }
        harness.run {
            Events.App.Opened(appName: "My App").trigger()
        }
        #expect(await harness.delivered())
        #expect(mixpanel.token == "abcd")
        #expect(mixpanel.trackedNames == ["App: Opened"])
    }
}
