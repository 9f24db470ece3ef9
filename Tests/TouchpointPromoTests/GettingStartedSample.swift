// The "Getting started with cross-promotion" article's samples, as written; the test runs the
// same steps against a catalog served on 127.0.0.1.
import Foundation
import Testing
import TouchpointCore
import TouchpointEvents
import TouchpointPromo
import TouchpointTesting

private let catalog = """
    {
      "apps": [
        { "id": "notes", "name": "Notes", "appStoreID": "123456789", "iconURL": "https://example.com/notes.png",
          "category": "Productivity", "tagline": { "en": "Write it down", "ko": "적어 두세요" } },
        { "id": "budget", "name": "Budget", "appStoreID": "987654321", "iconURL": "https://example.com/budget.png",
          "category": "Finance", "tagline": { "en": "Manage your money" } }
      ]
    }
    """

/// Compiled, never called: it would fetch from your-domain.com.
@MainActor private func listSample() async {
    let service = PromoService(
        config: PromoConfig(
            jsonURL: URL(string: "https://your-domain.com/apps.json")!,
            currentAppID: "notes",
            locale: "ko"
        ))
    await service.loadApps()
    for app in service.apps {
        print(app.name, service.tagline(for: app))  // Budget Manage your money
    }
}

private final class NoAppStore: AppStorePresenter {
    func presentAppStore(_ request: AppStoreRequest) {}
}

@MainActor struct GettingStartedSampleTests {
    @Test func theListAndItsEvents() async throws {
        let directory = try TemporaryDirectory()
        let server = try TestHTTPServer { _ in .text(catalog, headers: ["Content-Type": "application/json"]) }
        let recorder = EventRecorder(directory: directory.url)
        let service = PromoService(
            config: PromoConfig(
                jsonURL: server.url("/apps.json"), currentAppID: "notes", locale: "ko",
                cacheDirectory: directory.url.appendingPathComponent("cache")),
            recorder: recorder, appStorePresenter: NoAppStore())
        await service.loadApps()
        #expect(service.apps.map(\.name) == ["Budget"])
        #expect(service.apps.map { service.tagline(for: $0) } == ["Manage your money"])
        #expect(service.problems.isEmpty)
        let budget = try #require(service.apps.first)
        service.handleAppImpression(budget)
        service.handleAppTap(budget)
        let names = recorder.reader.events().map(\.name)
        #expect(names == ["promo_impression", "promo_tap"])
    }
}
