import Testing
import TouchpointStore

#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif

/// The seed's section 12 example, as written (the trailing comma in the `.init(...)` call is
/// valid Swift since 6.1), and what it must do.
///
/// This file does not import Foundation: with Foundation's `CGFloat` in scope, the example's own
/// `compactMap { … return p … }.reduce(0, +)` is ambiguous (Double or CGFloat, through the
/// implicit Double/CGFloat conversion), whatever the store's API.
struct SeedExampleTests {
    @Test func sumExpressionUpdatesCartTotalWhenAnyPriceChanges() throws {
        let store = DefaultStore(appID: "com.acme.app")
        let s = store.named(.scenarioSession(id: "checkout"))

        // The seed's text, kept as written (swift-format would re-indent it).
        // swift-format-ignore
        s.configureValidation(.init(
            mode: .strict,
            schema: [
              "cart.total": Rule(kind: .number, required: true, defaultValue: .number(0)),
              "user.name": Rule(kind: .string, required: false)
            ],
        ))

        // Live expression: cart.total = sum(items[*].price)
        // swift-format-ignore
        s.registerLiveExpression(.init(
            id: "sum-total",
            outputKeyPath: "cart.total",
            dependsOn: ["items[*].price"],
            compute: { get in
                guard case let .array(arr)? = get("items") else { return .number(0) }
                let sum = arr.compactMap {
                    if case let .object(obj) = $0, case let .number(p)? = obj["price"] { return p }
                    return nil
                }.reduce(0, +)
                return .number(sum)
            },
            policy: .writeIfChanged
        ))

        // The required default is filled in when validation is configured.
        #expect(s.get("cart.total") == .number(0))

        let totals = Recorder<StoreValue?>()
        let cancellable = s.publisher(for: "cart.total").sink { totals.append($0) }
        defer { cancellable.cancel() }

        s.set("items", [["title": "Socks", "price": 4.5], ["title": "Hat", "price": 10.0]])
        #expect(s.get("cart.total") == .number(14.5))

        s.set("items[1].price", .number(12))
        #expect(s.get("cart.total") == .number(16.5))

        s.set("items[2]", ["title": "Scarf", "price": 3.5])
        #expect(s.get("cart.total") == .number(20))

        s.remove("items[0]")
        #expect(s.get("cart.total") == .number(15.5))

        // A change that leaves the prices alone does not recompute into a new value.
        s.set("items[0].title", "Cap")
        #expect(totals.values == [.number(0), .number(14.5), .number(16.5), .number(20), .number(15.5)])

        // Strict validation rejects a string total and a number name, with reasons.
        #expect(s.set("cart.total", "free") == .failed(reason: #"cart.total: expected number, found string "free""#))
        #expect(s.set("user.name", .integer(7)) != .ok)
        #expect(s.set("user.name", "Ada") == .ok)
        #expect(s.get("cart.total") == .number(15.5))
    }
}
