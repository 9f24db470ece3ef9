// The README's "Who the user is and what they do" sample, as written, inside a function so that
// the compiler checks it on every build (FacadeTests run the same calls against a collector).
import Foundation
import Touchpoint

func readmeFacadeSample() async {
    let sdk = TouchpointSDK.current!

    sdk.track("Product Viewed", properties: ["sku": "A-1"])  // anonymous so far
    sdk.identify(userId: "u-42", traits: ["plan": "pro"])  // signed in: the visit is u-42's
    sdk.screen("Cart", category: "Shop")
    sdk.group("acme", traits: ["employees": 12])
    sdk.track("Order Completed", properties: ["total": 30])
    sdk.reset()  // signed out: a new anonymous id, no user, no traits, a new session
    sdk.flush()  // send what is pending now

    // Consent, remembered across launches: opted out, nothing is recorded, stored, routed or sent.
    await sdk.optOut(discardingPending: false)  // true also deletes what was not yet delivered
    await sdk.optIn()
}
