// The TouchpointUI "Getting started" article's samples, as written but without `@main` (a test
// bundle has its own entry point). They compile where SwiftUI exists; on Linux
// scripts/check-apple.sh type-checks them for each Apple platform against interface stubs.
#if canImport(SwiftUI)
import SwiftUI
import Touchpoint
import TouchpointUI

struct ShopApp: App {
    let store = DefaultStore(appID: "com.example.shop")

    init() {
        do {
            try TouchpointSDK.start(writeKey: "wk_…", collector: URL(string: "https://collector.example.com")!)
        } catch {
            print(error)  // names the argument at fault
        }
    }

    var body: some Scene {
        WindowGroup {
            SurveyTriggerView {
                ShopView(checkout: store.named(.scenarioSession(id: "checkout")))
            }
        }
    }
}

struct ShopView: View {
    let checkout: any KeyValueStore

    var body: some View {
        List {
            Section("Cart") {
                StoreBound(checkout, keyPaths: ["cart.total"]) { values in
                    Text(verbatim: "Total: \(values["cart.total"]?.doubleValue ?? 0)")
                }
            }
            Section("More Apps") {
                MoreAppsView(currentAppID: "shop")
            }
        }
    }
}
#endif
