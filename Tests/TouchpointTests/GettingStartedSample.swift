// The DocC "Getting started" article's platform-neutral samples, as written, inside a function so
// that the compiler checks them on every build (they need a running collector, so they are not
// run here; Server/Tests/TouchpointIntegrationTests runs the same calls against a real one).
import Foundation
import Touchpoint

func gettingStartedSample(signatureFromYourBackend: String) throws {
    try TouchpointSDK.start(writeKey: "wk_…", collector: URL(string: "http://127.0.0.1:8080")!)

    let sdk = TouchpointSDK.current!
    sdk.track("checkout_started", properties: ["items": 3])
    sdk.identify(userId: "u-42", traits: ["plan": "pro"])  // the anonymous visit becomes u-42's
    sdk.reset()  // signed out: the next person on the device is someone new

    let recorder = TouchpointSDK.current!.recorder
    recorder.record("checkout_started", properties: ["items": 3])

    let user = HTTPStoreBackend.User(id: "u-42", signature: signatureFromYourBackend)
    let store = TouchpointSDK.current!.makeStore(appID: "com.example.shop", user: user)
    _ = store
}
