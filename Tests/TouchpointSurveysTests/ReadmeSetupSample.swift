// The README's "One setup call" sample, as written but without `@main` (a test bundle has its
// own entry point). It compiles where SwiftUI exists; on Linux scripts/check-apple.sh type-checks it
// for each Apple platform against interface stubs of SwiftUI.
#if canImport(SwiftUI)
import SwiftUI
import Touchpoint

struct MyApp: App {
    init() {
        do {
            try TouchpointSDK.start(writeKey: "wk_…", collector: URL(string: "https://collector.example.com")!)
        } catch {
            print(error)  // names the argument at fault: an empty write key, a URL that is not http(s)
        }
    }

    var body: some Scene {
        WindowGroup {
            SurveyTriggerView {  // surveys from the collector's /v1/config/surveys
                ContentView()
            }
        }
    }
}

struct ContentView: View {
    var body: some View { Text("App") }
}
#endif
