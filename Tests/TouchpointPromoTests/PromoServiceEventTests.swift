import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointPromo
import TouchpointTesting

/// Impressions once per appearance, taps always; both to the delegate and into the event log;
/// taps open the App Store through the presenter with the attribution tokens.
@MainActor
struct PromoServiceEventTests {
    nonisolated static let catalog = PromoCatalogs.document(PromoCatalogs.apps("a", "b", "c"))

    func loadedService(
        _ fixture: PromoFixture,
        delegate: (any PromoEventDelegate)? = nil,
        presenter: (any AppStorePresenter)? = nil,
        recording: Bool = true
    ) async -> PromoService {
        fixture.server.enqueue(.json(Self.catalog))
        let service = fixture.service(delegate: delegate, presenter: presenter, recording: recording)
        await service.loadApps()
        return service
    }

    @Test func anImpressionCountsOncePerAppearance() async throws {
        let fixture = try PromoFixture()
        let delegate = RecordingDelegate()
        let service = await loadedService(fixture, delegate: delegate)
        let (b, c) = (service.apps[0], service.apps[1])

        // Redraws call onAppear again without a disappearance: counted once.
        service.handleAppImpression(b)
        service.handleAppImpression(b)
        service.handleAppImpression(c)
        service.handleAppImpression(b)
        #expect(delegate.events == [.impression(appID: "b"), .impression(appID: "c")])

        // Scrolled away and back: a new appearance.
        service.handleAppDisappear(b)
        service.handleAppImpression(b)
        service.handleAppImpression(c)
        #expect(delegate.events == [.impression(appID: "b"), .impression(appID: "c"), .impression(appID: "b")])
    }

    @Test func aReloadWithTheSameRowsDoesNotCountAgainButARowThatCameBackDoes() async throws {
        let fixture = try PromoFixture()
        let delegate = RecordingDelegate()
        fixture.server.enqueue(
            .json(Self.catalog),
            .json(Self.catalog),
            .json(PromoCatalogs.document(PromoCatalogs.apps("a", "c"))),
            .json(Self.catalog))
        let service = fixture.service(delegate: delegate)
        await service.loadApps()
        let b = service.apps[0]
        service.handleAppImpression(b)

        await service.forceRefresh()  // the same list: the row stays on screen
        service.handleAppImpression(b)
        #expect(delegate.events == [.impression(appID: "b")])

        await service.forceRefresh()  // b left the list (its row is gone, maybe without onDisappear)
        #expect(service.apps.map(\.id) == ["c"])
        await service.forceRefresh()  // and came back: a new row, a new impression
        service.handleAppImpression(b)
        #expect(delegate.events == [.impression(appID: "b"), .impression(appID: "b")])
    }

    @Test func everyTapCountsAndOpensTheAppStoreWithAttribution() async throws {
        let fixture = try PromoFixture()
        let delegate = RecordingDelegate()
        let presenter = RecordingAppStorePresenter()
        let service = await loadedService(fixture, delegate: delegate, presenter: presenter)
        let b = service.apps[0]
        service.handleAppTap(b)
        service.handleAppTap(b)
        #expect(delegate.events == [.tap(appID: "b"), .tap(appID: "b")])
        let expected = AppStoreRequest(
            appStoreID: b.appStoreID, appID: "b", currentAppID: "a", providerToken: "12345",
            campaignToken: "settings-more-apps")
        #expect(presenter.requests == [expected, expected])
        #expect(
            expected.webURL.absoluteString
                == "https://apps.apple.com/app/id\(b.appStoreID)?pt=12345&ct=settings-more-apps")
    }

    @Test func aTapWithoutAPresenterIsStillCounted() async throws {
        let fixture = try PromoFixture()
        let delegate = RecordingDelegate()
        let service = await loadedService(fixture, delegate: delegate)
        service.handleAppTap(service.apps[1])
        #expect(delegate.events == [.tap(appID: "c")])
        #expect(await fixture.recordedPromoEvents().map(\.name) == ["promo_tap"])
    }

    @Test func eventsAreRecordedIntoTheLogWithBothAppIDs() async throws {
        let fixture = try PromoFixture()
        let service = await loadedService(fixture, presenter: RecordingAppStorePresenter())
        let (b, c) = (service.apps[0], service.apps[1])
        service.handleAppImpression(b)
        service.handleAppImpression(c)
        service.handleAppImpression(b)
        service.handleAppTap(c)
        let events = await fixture.recordedPromoEvents()
        #expect(
            events == [
                RecordedEvent(name: "promo_impression", properties: ["appID": "b", "currentAppID": "a"]),
                RecordedEvent(name: "promo_impression", properties: ["appID": "c", "currentAppID": "a"]),
                RecordedEvent(name: "promo_tap", properties: ["appID": "c", "currentAppID": "a"]),
            ])
        // Durable on return: the lines are in the session's events.jsonl on disk.
        let session = try #require(await fixture.recorder.currentSession())
        let path =
            fixture.directory.path + "/"
            + LogLayout(base: fixture.directory.url).relativeSessionDirectory(
                userId: session.userId, sessionId: session.id)
            + "/events.jsonl"
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.filter { $0.contains("\"promo_") }.count == 3)
    }

    @Test func withoutARecorderTheDelegateStillHearsEverything() async throws {
        let fixture = try PromoFixture()
        let delegate = RecordingDelegate()
        let service = await loadedService(fixture, delegate: delegate, recording: false)
        #expect(service.recorder == nil)
        service.handleAppImpression(service.apps[0])
        service.handleAppTap(service.apps[0])
        #expect(delegate.events == [.impression(appID: "b"), .tap(appID: "b")])
        #expect(await fixture.recorder.allEvents().isEmpty)
    }

    @Test func anInlineDelegateIsKeptAlive() async throws {
        let fixture = try PromoFixture()
        weak var weakDelegate: RecordingDelegate?
        fixture.server.enqueue(.json(Self.catalog))
        let service: PromoService = {
            // Nobody but the service keeps this handler, as in `MoreAppsView(config:eventDelegate: Handler())`.
            let handler = RecordingDelegate()
            weakDelegate = handler
            return fixture.service(delegate: handler)
        }()
        await service.loadApps()
        service.handleAppTap(service.apps[0])
        let delegate = try #require(weakDelegate)
        #expect(delegate.events == [.tap(appID: "b")])
    }

    @Test func theDelegateCanBeReplacedAndRemoved() async throws {
        let fixture = try PromoFixture()
        let first = RecordingDelegate()
        let second = RecordingDelegate()
        let service = await loadedService(fixture, delegate: first)
        service.handleAppTap(service.apps[0])
        service.eventDelegate = second
        service.handleAppTap(service.apps[1])
        service.eventDelegate = nil
        service.handleAppTap(service.apps[1])
        #expect(first.events == [.tap(appID: "b")])
        #expect(second.events == [.tap(appID: "c")])
        #expect(await fixture.recordedPromoEvents().count == 3)
    }

    @Test func theDelegateSeesTheEventAfterItIsInTheLog() async throws {
        let fixture = try PromoFixture()
        let probe = LogProbe(recorder: fixture.recorder)
        let service = await loadedService(fixture, delegate: probe)
        service.handleAppImpression(service.apps[0])
        #expect(probe.countsSeen == [1])
    }

    @Test func theURLPresenterOpensTheAppStorePage() async throws {
        let fixture = try PromoFixture()
        var opened: [URL] = []
        let service = await loadedService(fixture, presenter: OpenURLAppStorePresenter { opened.append($0) })
        service.handleAppTap(service.apps[1])
        #expect(
            opened.map(\.absoluteString) == [
                "https://apps.apple.com/app/id\(service.apps[1].appStoreID)?pt=12345&ct=settings-more-apps"
            ])
    }

    @Test func anAppStorePageWithoutTokensHasNoQuery() {
        let request = AppStoreRequest(appStoreID: "987654321", appID: "myapp2", currentAppID: "myapp1")
        #expect(request.webURL.absoluteString == "https://apps.apple.com/app/id987654321")
    }

    @Test func eventNamesFollowTheContract() {
        #expect(PromoEvent.impression(appID: "x").name == "promo_impression")
        #expect(PromoEvent.tap(appID: "x").name == "promo_tap")
        #expect(PromoEvent.tap(appID: "x").appID == "x")
    }
}

/// A delegate that counts the promo events already in the log when it is called.
@MainActor
final class LogProbe: PromoEventDelegate {
    let recorder: EventRecorder
    private(set) var countsSeen: [Int] = []

    init(recorder: EventRecorder) { self.recorder = recorder }

    func promoService(_ service: PromoService, didEmit event: PromoEvent) {
        countsSeen.append(recorder.statistics.recorded)
    }
}
