// The seed's SwiftUI samples, as written (with `import Touchpoint` and `import TouchpointUI` for
// `import CrossPromoKit`). They build on Apple platforms; on Linux scripts/check-apple.sh type-checks
// them for each Apple platform against interface stubs of SwiftUI.
#if canImport(SwiftUI)
import SwiftUI
import Touchpoint
import TouchpointUI

struct SettingsView: View {
    var body: some View {
        List {
            // Your other settings...

            Section("More Apps") {
                MoreAppsView(currentAppID: "myapp1")
            }
        }
    }
}

struct CustomConfigurationView: View {
    let config = PromoConfig(
        jsonURL: URL(string: "https://your-domain.com/apps.json")!,
        currentAppID: "myapp1"
    )

    var body: some View {
        MoreAppsView(config: config)
    }
}

struct AnalyticsView: View {
    let config = PromoConfig(
        jsonURL: URL(string: "https://your-domain.com/apps.json")!,
        currentAppID: "myapp1"
    )

    var body: some View {
        // Usage
        let handler = AnalyticsHandler()
        MoreAppsView(config: config, eventDelegate: handler)
    }
}
#endif
