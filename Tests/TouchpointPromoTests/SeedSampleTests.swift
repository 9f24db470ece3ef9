import Foundation
import Testing
import Touchpoint
import TouchpointTesting

// The seed's README samples that do not need SwiftUI, compiled as written (with `import
// Touchpoint` for `import CrossPromoKit`). The SwiftUI ones are in SeedSampleViews.swift.

/// Stands in for the app's analytics tool named in the seed's sample.
@MainActor
enum Analytics {
    static var logged: [(String, [String: String])] = []

    static func log(_ name: String, _ properties: [String: String]) { logged.append((name, properties)) }
}

class AnalyticsHandler: PromoEventDelegate {
    func promoService(_ service: PromoService, didEmit event: PromoEvent) {
        switch event {
        case .impression(let appID):
            // Track impression in your analytics
            Analytics.log("promo_impression", ["app_id": appID])
        case .tap(let appID):
            // Track tap in your analytics
            Analytics.log("promo_tap", ["app_id": appID])
        }
    }
}

@MainActor
struct SeedSampleTests {
    @Test func theCustomConfigurationSample() {
        let config = PromoConfig(
            jsonURL: URL(string: "https://your-domain.com/apps.json")!,
            currentAppID: "myapp1"
        )
        #expect(config.jsonURL.host == "your-domain.com")
        #expect(config.currentAppID == "myapp1")
        #expect(config.isCatalogURLSet)
    }

    @Test func theAnalyticsSampleAgainstTheSeedsCatalog() async throws {
        let server = try TestHTTPServer { _ in
            .text(PromoCatalogs.seedQuickStart, headers: ["Content-Type": "application/json"])
        }
        let directory = try TemporaryDirectory(prefix: "promo-seed")
        let config = PromoConfig(jsonURL: server.url("/apps.json"), currentAppID: "myapp1")

        // Usage
        let handler = AnalyticsHandler()
        let service = PromoService(
            config: config, eventDelegate: handler, recorder: EventRecorder(directory: directory.url))

        // The seed's PromoService API.
        await service.loadApps()
        let apps: [PromoApp] = service.apps
        let isLoading: Bool = service.isLoading
        let error: (any Error)? = service.error
        #expect(apps.map(\.id) == ["myapp2"], "the current app is excluded automatically")
        #expect(!isLoading)
        #expect(error == nil)
        await service.forceRefresh()
        service.handleAppImpression(apps[0])
        service.handleAppTap(apps[0])

        let logged = Analytics.logged.map { "\($0.0) \($0.1)" }
        #expect(logged == [#"promo_impression ["app_id": "myapp2"]"#, #"promo_tap ["app_id": "myapp2"]"#])
        #expect(server.requestCount == 2)
    }
}
