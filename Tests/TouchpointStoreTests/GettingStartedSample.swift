// The "Getting started with the scenario store" article's samples, as written; the test runs
// them (the file scope in a temporary directory instead of /tmp).
import Foundation
import Testing
import TouchpointCore
import TouchpointStore
import TouchpointTesting

#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif

struct GettingStartedSampleTests {
    @Test func theArticleRuns() throws {
        let store = DefaultStore(appID: "com.example.shop")
        let checkout = store.named(.scenarioSession(id: "checkout"))

        checkout.set("cart.items", [["title": "Socks", "price": 4.5]])
        checkout.set("cart.coupon", "SPRING")
        let coupon = checkout.get("cart.coupon")?.stringValue  // "SPRING"
        let firstPrice = checkout.get("cart.items[0].price")?.doubleValue  // 4.5
        #expect(coupon == "SPRING")
        #expect(firstPrice == 4.5)

        let printed = Locked<[String]>([])
        let subscription = checkout.publisher(for: "cart.coupon").sink { value in
            printed.withLock { $0.append("coupon: \(value?.stringValue ?? "none")") }
        }
        checkout.remove("cart.coupon")  // prints "coupon: none"
        #expect(printed.withLock { $0 } == ["coupon: SPRING", "coupon: none"])
        subscription.cancel()

        let directory = try TemporaryDirectory()
        let file = directory.url.appendingPathComponent("shop-settings.json")
        let settings = store.named(.file(url: file))
        settings.set("theme", "dark")
        store.flush()  // write now, as on going to the background
        let reopened = DefaultStore(appID: "com.example.shop").named(.file(url: file))
        #expect(reopened.get("theme")?.stringValue == "dark")
    }
}
