import Foundation
import Testing
import TouchpointStore
import TouchpointTesting

#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif

/// Live expression outputs that no subscriber watches are kept apart from the value tree until
/// something reads there; these tests pin that every reader still sees them at once.
struct OutputSlotTests {
    /// `n1 = n0 + 1`, …, `n<depth> = n<depth-1> + 1`.
    private func chain(_ store: any KeyValueStore, depth: Int, prefix: String = "n") {
        for level in 1...depth {
            let input = "\(prefix)\(level - 1)"
            store.registerLiveExpression(
                LiveExpression(id: "\(prefix)\(level)", outputKeyPath: "\(prefix)\(level)", dependsOn: [input]) { get in
                    guard case .integer(let value)? = get(input) else { return nil }
                    return .integer(value + 1)
                })
        }
    }

    @Test func readersSeeOutputsComputedWithoutAReadInBetween() throws {
        let store = DefaultStore(appID: "slots").named(.appMemory)
        store.set("n0", 0)
        chain(store, depth: 5)
        for value in 1...20 { store.set("n0", .integer(value)) }
        #expect(store.get("n5") == 25)
        #expect(store.exists("n3"))
        #expect(store.snapshot() == ["n0": 20, "n1": 21, "n2": 22, "n3": 23, "n4": 24, "n5": 25])
        #expect(try store.get("n4", as: Int.self) == 24)
        // A subscriber that arrives later starts from the latest output.
        let values = Recorder<StoreValue?>()
        let cancellable = store.publisher(for: "n5").sink { values.append($0) }
        store.set("n0", 30)
        #expect(values.values == [25, 35])
        cancellable.cancel()
        // Unwatched again: still current for every reader.
        store.set("n0", 40)
        #expect(store.get("$") == ["n0": 40, "n1": 41, "n2": 42, "n3": 43, "n4": 44, "n5": 45])
    }

    @Test func aComputeReadingThroughTheStoreSeesOutputsOfTheSamePass() {
        let store = DefaultStore(appID: "slots").named(.appMemory)
        store.set("a", 1)
        store.registerLiveExpression(
            .init(id: "b", outputKeyPath: "b", dependsOn: ["a"]) { get in
                .integer((get("a")?.doubleValue.map(Int.init) ?? 0) * 10)
            })
        // Declares `b` but reads it (and the whole state) through the store, not through `get`.
        store.registerLiveExpression(
            .init(id: "c", outputKeyPath: "c", dependsOn: ["b"]) { _ in
                let b = store.get("b")
                let whole = store.snapshot()["b"]
                return b == whole ? b : .string("inconsistent")
            })
        for value in 2...4 { store.set("a", .integer(value)) }
        #expect(store.get("c") == 40)
    }

    @Test func writingAboveAnOutputSeesItsLatestValue() throws {
        let store = DefaultStore(appID: "slots").scoped(.appMemory)
        store.set("a", 1)
        store.registerLiveExpression(
            .init(id: "total", outputKeyPath: "cart.total", dependsOn: ["a"]) { get in
                .integer(Int(get("a")?.doubleValue ?? 0) * 2)
            })
        store.set("a", 5)
        let changes = Recorder<StoreChange>()
        let cancellable = store.changesPublisher.sink { changes.append($0) }
        defer { cancellable.cancel() }
        store.set("cart", ["count": 1])
        let patch = try #require(changes.values.last?.patches.first)
        #expect(patch.oldValue == ["total": 10])
        #expect(store.get("cart") == ["count": 1])
        // The expression runs again on its next input change and writes into the new object.
        store.set("a", 6)
        #expect(store.get("cart") == ["count": 1, "total": 12])
        // A write beside the output leaves it alone.
        store.set("a", 7)
        store.set("cart.count", 2)
        #expect(store.get("cart") == ["count": 2, "total": 14])
    }

    @Test func anOutputRemovedAndWrittenAgainLandsUnderItsParents() {
        let store = DefaultStore(appID: "slots").named(.appMemory)
        store.set("flag", true)
        store.registerLiveExpression(
            .init(id: "echo", outputKeyPath: "deep.er.echo", dependsOn: ["flag"]) { get in
                get("flag") == true ? .string("on") : nil
            })
        for round in 0..<6 { store.set("flag", .bool(round % 2 == 1)) }
        #expect(store.get("deep.er.echo") == "on")
        store.set("flag", false)
        #expect(store.exists("deep.er.echo") == false)
        #expect(store.get("deep") == ["er": .object([:])])
    }

    @Test func transactionsAndDryRunsStartFromTheLatestOutputs() {
        let store = DefaultStore(appID: "slots").named(.appMemory)
        store.set("n0", 0)
        chain(store, depth: 3)
        store.set("n0", 10)
        var seen: StoreValue?
        store.transaction { t in
            seen = t.get("n3")
            t.set("other", 1)
        }
        #expect(seen == 13)
        #expect(store.validateWrite("n3", 99) == .ok)
        #expect(store.get("n3") == 13)
    }

    @Test func persistenceWritesTheLatestOutputs() throws {
        let directory = try TemporaryDirectory()
        let url = directory.appending("slots.json")
        do {
            let store = DefaultStore(appID: "slots").named(.file(url: url))
            store.set("n0", 0)
            chain(store, depth: 3)
            for value in 1...5 { store.set("n0", .integer(value)) }
        }  // released: flushed
        let document = try #require(try StoreDocument.read(from: url))
        #expect(document.values == ["n0": 5, "n1": 6, "n2": 7, "n3": 8])
    }

    @Test func removingTheRootLeavesAnEmptyObjectForItsSubscribers() {
        let store = DefaultStore(appID: "slots").named(.appMemory)
        let values = Recorder<StoreValue?>()
        let cancellable = store.publisher(for: "$").sink { values.append($0) }
        defer { cancellable.cancel() }
        store.remove("$")  // already empty: nothing changes
        store.set("a", 1)
        store.remove("$")
        #expect(values.values == [.object([:]), ["a": 1], .object([:])])
        #expect(store.get("$") == .object([:]))
    }

    @Test func aWatchedOutputNotifiesWithEveryNewValueOnly() {
        let store = DefaultStore(appID: "slots").named(.appMemory)
        store.set("n0", 0)
        chain(store, depth: 4)
        let middle = Recorder<StoreValue?>()
        let root = Recorder<StoreValue?>()
        let c1 = store.publisher(for: "n2").sink { middle.append($0) }
        let c2 = store.publisher(for: "$").sink { root.append($0) }
        defer {
            c1.cancel()
            c2.cancel()
        }
        store.set("n0", 1)
        store.set("n0", 1)
        store.set("n0", 2)
        #expect(middle.values == [2, 3, 4])
        // Every state the root subscriber sees is consistent: n4 = n0 + 4.
        for case .object(let members)? in root.values {
            #expect(members["n4"]?.doubleValue == (members["n0"]?.doubleValue).map { $0 + 4 })
        }
        #expect(root.values.count == 3)
    }
}
