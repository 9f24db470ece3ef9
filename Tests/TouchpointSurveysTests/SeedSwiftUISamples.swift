// The seed README's SwiftUI samples. They only compile where SwiftUI exists; on Linux
// `SeedSampleTests` checks that they (and TouchpointUI) parse, and scripts/check-apple.sh type-checks
// them for each Apple platform against interface stubs of SwiftUI.
#if canImport(SwiftUI)
import SwiftUI
import Touchpoint
import TouchpointUI

// "Use in your app".
struct RootView: View {
    let config: SurveyConfig

    var body: some View {
        SurveyTriggerView(config: config) {
            AppContent()
        }
    }
}

// "Remote config with live updates": the README shows these lines loose; here they sit in a view.
struct RemoteRootView: View {
    let manager: SurveyConfigManager

    init() throws {
        let initial = try SurveyConfig.from(url: Bundle.main.url(forResource: "survey", withExtension: "json")!)
        let manager = SurveyConfigManager(initial: initial)
        manager.startAutoRefresh(url: URL(string: "https://example.com/survey.json")!, interval: 300)
        self.manager = manager
    }

    var body: some View {
        SurveyTriggerView(manager: manager) {
            AppContent()
        }
    }
}

struct AppContent: View {
    var body: some View { Text("App") }
}
#endif
