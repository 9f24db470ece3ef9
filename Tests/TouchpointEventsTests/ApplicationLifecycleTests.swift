import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointTesting

/// Segment's application lifecycle events, decided from injected versions and lifecycle events.
struct ApplicationLifecycleTests {
    static let v1 = ApplicationVersion(version: "1.0", build: "100")
    static let v2 = ApplicationVersion(version: "1.1", build: "110")

    /// The recorded events' names and properties, in order.
    static func recorded(_ recorder: EventRecorder) async -> [(String, [String: EventValue])] {
        await recorder.allEvents().map { ($0.name, $0.properties) }
    }

    @Test func aFirstLaunchIsAnInstallThenOpenedAndNothingMoreOnTheSameVersion() async throws {
        let fixture = try RecorderFixture()
        ApplicationLifecycleRecorder(recorder: fixture.recorder, application: Self.v1).launch(announcedLater: false)
        var events = await Self.recorded(fixture.recorder)
        #expect(events.map(\.0) == ["Application Installed", "Application Opened"])
        #expect(events[0].1 == ["version": "1.0", "build": "100"])
        #expect(events[1].1 == ["from_background": false, "version": "1.0", "build": "100"])

        // The next launch of the same build: opened only.
        let relaunched = fixture.relaunch()
        ApplicationLifecycleRecorder(recorder: relaunched, application: Self.v1).launch(announcedLater: false)
        events = await Self.recorded(relaunched)
        #expect(events.map(\.0) == ["Application Installed", "Application Opened", "Application Opened"])
    }

    @Test func aChangedVersionIsAnUpdateWithThePreviousVersionAndBuild() async throws {
        let fixture = try RecorderFixture()
        ApplicationLifecycleRecorder(recorder: fixture.recorder, application: Self.v1).launch(announcedLater: false)
        let relaunched = fixture.relaunch()
        ApplicationLifecycleRecorder(recorder: relaunched, application: Self.v2).launch(announcedLater: false)
        let updated = try #require(await Self.recorded(relaunched).first { $0.0 == "Application Updated" })
        #expect(
            updated.1 == ["version": "1.1", "build": "110", "previous_version": "1.0", "previous_build": "100"])
        // And only once.
        let third = fixture.relaunch()
        ApplicationLifecycleRecorder(recorder: third, application: Self.v2).launch(announcedLater: false)
        #expect(await Self.recorded(third).filter { $0.0 == "Application Updated" }.count == 1)
    }

    @Test func aReportedLaunchOpensWithItsURLAndTheBackgroundComesAndGoes() async throws {
        let fixture = try RecorderFixture()
        let lifecycle = ApplicationLifecycleRecorder(recorder: fixture.recorder, application: Self.v1)
        lifecycle.launch(announcedLater: true)
        #expect(await Self.recorded(fixture.recorder).map(\.0) == ["Application Installed"])
        lifecycle.handle(.willEnterForeground)  // the first foreground is not a return
        lifecycle.handle(
            .didFinishLaunching(url: URL(string: "shop://cart/42"), referringApplication: "com.example.mail"))
        lifecycle.handle(.didEnterBackground)
        lifecycle.handle(.willEnterForeground)
        lifecycle.handle(.willTerminate)
        let events = await Self.recorded(fixture.recorder)
        #expect(
            events.map(\.0) == [
                "Application Installed", "Application Opened", "Application Backgrounded", "Application Opened",
            ])
        #expect(
            events[1].1 == [
                "from_background": false, "version": "1.0", "build": "100", "url": "shop://cart/42",
                "referring_application": "com.example.mail",
            ])
        #expect(events[2].1 == [:])
        #expect(events[3].1 == ["from_background": true, "version": "1.0", "build": "100"])
    }

    @Test(arguments: [
        (AutomaticEvents.applicationInstalled, "Application Installed"),
        (.applicationOpened, "Application Opened"),
        (.applicationBackgrounded, "Application Backgrounded"),
    ])
    func eachEventCanBeSwitchedOff(_ off: AutomaticEvents, _ name: String) async throws {
        let fixture = try RecorderFixture()
        var events = AutomaticEvents.all
        events.remove(off)
        let lifecycle = ApplicationLifecycleRecorder(recorder: fixture.recorder, application: Self.v1, events: events)
        lifecycle.launch(announcedLater: false)
        lifecycle.handle(.didEnterBackground)
        lifecycle.handle(.willEnterForeground)
        let all = ["Application Installed", "Application Opened", "Application Backgrounded", "Application Opened"]
        #expect(await Self.recorded(fixture.recorder).map(\.0) == all.filter { $0 != name })
    }

    @Test func updatesCanBeSwitchedOffAndTheVersionIsStillKept() async throws {
        let fixture = try RecorderFixture()
        ApplicationLifecycleRecorder(recorder: fixture.recorder, application: Self.v1).launch(announcedLater: false)
        let relaunched = fixture.relaunch()
        var events = AutomaticEvents.all
        events.remove(.applicationUpdated)
        ApplicationLifecycleRecorder(recorder: relaunched, application: Self.v2, events: events)
            .launch(announcedLater: false)
        #expect(!(await Self.recorded(relaunched).map(\.0).contains("Application Updated")))
        // The next launch of v2 is not an update either: v2 was remembered.
        let third = fixture.relaunch()
        ApplicationLifecycleRecorder(recorder: third, application: Self.v2).launch(announcedLater: false)
        #expect(!(await Self.recorded(third).map(\.0).contains("Application Updated")))
    }

    /// An app with scenes (UIKit gives it no launch options): the launch waits for the app to
    /// become active, and the URL the scene forwards meanwhile (its connection options, or
    /// SwiftUI's `onOpenURL`) is the one `Application Opened` carries. So is a scene's URL on a
    /// return from the background; a URL that arrives while the app is active is a `Deep Link
    /// Opened`.
    @Test func aScenesURLIsCarriedByTheOpeningItCameWith() async throws {
        let fixture = try RecorderFixture()
        let lifecycle = ApplicationLifecycleRecorder(
            recorder: fixture.recorder, application: Self.v1, waitsForActivation: true)
        lifecycle.launch(announcedLater: true)
        lifecycle.handle(.didFinishLaunching(url: nil, referringApplication: nil))
        #expect(await Self.recorded(fixture.recorder).map(\.0) == ["Application Installed"], "waits for activation")
        // scene(_:willConnectTo:options:): options.urlContexts
        lifecycle.openURL(URL(string: "shop://cart/42")!, referringApplication: "com.example.mail")
        lifecycle.handle(.didBecomeActive)
        lifecycle.openURL(URL(string: "shop://cart/42")!)  // the same URL again (onOpenURL too): once
        lifecycle.handle(.didBecomeActive)  // an interruption ended: no opening
        lifecycle.openURL(URL(string: "shop://offers")!)  // while active
        lifecycle.handle(.didEnterBackground)
        lifecycle.handle(.willEnterForeground)
        lifecycle.openURL(URL(string: "shop://cart/43")!)  // scene(_:openURLContexts:)
        lifecycle.handle(.didBecomeActive)
        lifecycle.handle(.didEnterBackground)
        lifecycle.handle(.willEnterForeground)
        lifecycle.handle(.didBecomeActive)

        let events = await Self.recorded(fixture.recorder)
        #expect(
            events.map(\.0) == [
                "Application Installed", "Application Opened", "Deep Link Opened", "Application Backgrounded",
                "Application Opened", "Application Backgrounded", "Application Opened",
            ])
        #expect(
            events[1].1 == [
                "from_background": false, "version": "1.0", "build": "100", "url": "shop://cart/42",
                "referring_application": "com.example.mail",
            ])
        #expect(events[2].1 == ["url": "shop://offers"])
        #expect(events[4].1 == ["from_background": true, "version": "1.0", "build": "100", "url": "shop://cart/43"])
        #expect(events[6].1 == ["from_background": true, "version": "1.0", "build": "100"])
    }

    /// The launch options' URL (an app without scenes) is carried as before; the app forwarding the
    /// same URL from `application(_:open:options:)` does not record it twice, another URL is a
    /// deep link. Without activation announced, the opening is recorded at once.
    @Test func aLaunchOptionsURLIsNotRecordedTwice() async throws {
        let fixture = try RecorderFixture()
        let lifecycle = ApplicationLifecycleRecorder(recorder: fixture.recorder, application: Self.v1)
        lifecycle.launch(announcedLater: true)
        lifecycle.handle(.didFinishLaunching(url: URL(string: "shop://cart/42"), referringApplication: nil))
        lifecycle.openURL(URL(string: "shop://cart/42")!)
        lifecycle.openURL(URL(string: "shop://cart/44")!)
        let events = await Self.recorded(fixture.recorder)
        #expect(events.map(\.0) == ["Application Installed", "Application Opened", "Deep Link Opened"])
        #expect(events[1].1["url"] == "shop://cart/42")
        #expect(events[2].1 == ["url": "shop://cart/44"])
    }

    /// A URL forwarded before the launch is announced (a scene that connects first) still rides
    /// on the launch's `Application Opened`; with Opened switched off, the URL is a deep link.
    @Test func aURLBeforeTheLaunchIsAnnouncedAndWithOpenedSwitchedOff() async throws {
        let fixture = try RecorderFixture()
        let lifecycle = ApplicationLifecycleRecorder(recorder: fixture.recorder, application: Self.v1)
        lifecycle.launch(announcedLater: true)
        lifecycle.openURL(URL(string: "shop://early")!)
        lifecycle.handle(.didFinishLaunching(url: nil, referringApplication: nil))
        #expect(await Self.recorded(fixture.recorder).last?.1["url"] == "shop://early")

        let quiet = try RecorderFixture()
        let withoutOpened = ApplicationLifecycleRecorder(
            recorder: quiet.recorder, application: Self.v1, events: [.applicationInstalled], waitsForActivation: true)
        withoutOpened.launch(announcedLater: false)
        withoutOpened.openURL(URL(string: "shop://cart/1")!)
        withoutOpened.handle(.didBecomeActive)
        let events = await Self.recorded(quiet.recorder)
        #expect(events.map(\.0) == ["Application Installed", "Deep Link Opened"])
    }

    @Test(arguments: [
        ("CartViewController", "Cart"), ("ShopKit.ProductDetailsViewController", "ProductDetails"),
        ("SettingsController", "Settings"), ("Settings", "Settings"), ("ViewController", "ViewController"),
        ("ListViewController<Item>", "List"),
    ])
    func viewControllersAreNamedAsSegmentNamesThem(_ type: String, _ screen: String) {
        #expect(ScreenViews.name(forViewController: type) == screen)
    }

    @Test func screenViewsRecordAScreenWithItsCategory() async throws {
        let fixture = try RecorderFixture()
        let event = try #require(
            ScreenViews.record("Cart", category: "Shop", properties: ["items": 2], in: fixture.recorder))
        #expect(event.type == .screen)
        #expect(event.name == "Cart")
        #expect(event.properties == ["category": "Shop", "items": 2])
    }
}
