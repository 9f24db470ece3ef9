import Testing
import TouchpointStore

struct BindingTests {
    @Test func subscribesOnAppearAndCancelsOnDisappear() {
        let store = DefaultStore(appID: "binding").scoped(.scenarioSession(id: "s"))
        store.set("cart.total", 3)
        let updates = Recorder<[String: StoreValue]>()
        let binding = StoreBinding(store: store, keyPaths: ["cart.total", "user.name"]) { updates.append($0) }
        #expect(store.subscriptionCount == 0)
        #expect(binding.values.isEmpty)

        binding.appear()
        binding.appear()  // a second appear does nothing
        #expect(binding.isActive)
        #expect(store.subscriptionCount == 1)
        #expect(updates.values == [["cart.total": 3, "user.name": .null]])

        store.set("user.name", "Ada")
        store.set("unrelated", true)
        #expect(updates.values.count == 2)
        #expect(binding.values == ["cart.total": 3, "user.name": "Ada"])

        binding.disappear()
        #expect(!binding.isActive)
        #expect(store.subscriptionCount == 0)
        store.set("cart.total", 4)
        #expect(updates.values.count == 2)

        // Appearing again delivers the current values.
        binding.appear()
        #expect(updates.values.last == ["cart.total": 4, "user.name": "Ada"])
        binding.disappear()
    }

    @Test func releasingABindingCancelsIt() {
        let store = DefaultStore(appID: "binding").scoped(.appMemory)
        do {
            let binding = StoreBinding(store: store, keyPaths: ["a"]) { _ in }
            binding.appear()
            #expect(store.subscriptionCount == 1)
        }
        #expect(store.subscriptionCount == 0)
    }
}
