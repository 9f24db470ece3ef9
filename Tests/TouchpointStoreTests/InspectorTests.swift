#if DEBUG
import Testing
import TouchpointStore

#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif

struct InspectorTests {
    @Test func showsValuesSubscriptionsExpressionsAndRecentChanges() {
        let store = DefaultStore(appID: "inspect", configuration: .init(recentChangeLimit: 3)).scoped(.appMemory)
        let inspector = StoreInspector(store)
        store.set("cart", ["total": 2.5, "items": [["title": "Socks"]], "empty": [:]])
        store.set("theme.accent", .color("#FF8800"))
        let cancellable = store.publisher(for: "cart.total").sink { _ in }
        defer { cancellable.cancel() }
        store.registerLiveExpression(
            .init(id: "n", outputKeyPath: "count", dependsOn: ["cart.items"]) { get in
                .integer(get("cart.items")?.arrayValue?.count ?? 0)
            })

        #expect(
            inspector.entries().map(\.keyPath) == [
                "cart.empty", "cart.items[0].title", "cart.total", "count", "theme.accent",
            ])
        #expect(inspector.entries().last?.valueText == ##"{"$color":"#FF8800"}"##)
        #expect(inspector.subscriptions().map(\.keyPaths) == [["cart.total"]])
        #expect(inspector.subscriptions().first?.kind == "publisher")
        #expect(inspector.liveExpressions().map(\.id) == ["n"])

        for value in 1...5 { store.set("tick", .integer(value)) }
        let recent = inspector.recentChanges()
        #expect(recent.count == 3)  // bounded, oldest first
        #expect(recent.map { $0.patches.first?.newValue } == [3, 4, 5])
    }

    @Test func manualWritesTakeJSONAndReportWhatIsWrong() {
        let store = DefaultStore(appID: "inspect").scoped(.appMemory)
        let inspector = StoreInspector(store)
        let seen = Recorder<StoreValue?>()
        let cancellable = store.publisher(for: "banner.color").sink { seen.append($0) }
        defer { cancellable.cancel() }
        #expect(inspector.write("banner.color", jsonText: ##"{"$color":"#00FF00"}"##) == .ok)
        #expect(seen.values == [nil, .color("#00FF00")])
        #expect(inspector.write("banner.title", jsonText: "\"Hi\"") == .ok)
        #expect(
            inspector.write("banner.count", jsonText: "{oops")
                == .failed(reason: "banner.count: invalid JSON at byte 1: expected a string key"))
        #expect(inspector.remove("banner.title") == .ok)
        #expect(store.snapshot() == ["banner": ["color": .color("#00FF00")]])
    }
}
#endif
