import Testing
import TouchpointStore

#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif

struct KeyPathTests {
    private func makeStore() -> any KeyValueStore { DefaultStore(appID: "paths").named(.appMemory) }

    @Test func quotedKeysHoldDotsBracketsAndEscapes() {
        let store = makeStore()
        #expect(store.set(#"labels["pt-BR"]"#, "Olá") == .ok)
        #expect(store.set(#"["a.b"]["c[0]"]"#, 1) == .ok)
        #expect(store.set(#"odd["quote\"d"]["back\\slash"]"#, true) == .ok)
        #expect(store.snapshot()["a.b"] == ["c[0]": 1])
        #expect(store.get(#"["a.b"]["c[0]"]"#) == 1)
        #expect(store.get("a.b") == nil)
        #expect(store.get("labels") == ["pt-BR": "Olá"])
        #expect(store.get(#"odd["quote\"d"]"#) == ["back\\slash": true])
        #expect(store.get(#"["labels"]["pt-BR"]"#) == "Olá")
    }

    @Test func indicesAppendAtTheEndAndRefusePastIt() {
        let store = makeStore()
        #expect(store.set("items[0].title", "first") == .ok)  // creates the array
        #expect(store.set("items[1]", ["title": "second"]) == .ok)  // appends
        #expect(
            store.set("items[3]", "gap")
                == .failed(
                    reason: "items[3]: index 3 is out of range: items has 2 elements (a write may append at index 2)"))
        #expect(store.set("items[5].title", "x") != .ok)
        #expect(store.get("items[2]") == nil)
        #expect(store.get("items[99].title") == nil)
        #expect(store.remove("items[7]") == .ok)  // removing nothing is fine
        #expect(store.get("items") == [["title": "first"], ["title": "second"]])
        #expect(store.set("fresh[1]", 1) != .ok)  // a new array starts at index 0
        #expect(store.exists("fresh") == false)
    }

    @Test func typeMismatchesAlongThePathAreRefusedAndNamed() {
        let store = makeStore()
        store.set("cart.total", 12)
        store.set("items", [1, 2])
        #expect(
            store.set("cart.total.amount", 1)
                == .failed(reason: "cart.total.amount: cart.total is an integer, not an object"))
        #expect(store.set("items.first", 1) == .failed(reason: "items.first: items is an array, not an object"))
        #expect(store.set("cart[0]", 1) == .failed(reason: "cart[0]: cart is an object, not an array"))
        #expect(store.set("[0]", 1) == .failed(reason: "[0]: the root is an object, not an array"))
        #expect(store.get("cart.total.amount") == nil)
        #expect(store.get("items.first") == nil)
        #expect(store.remove("cart.total.amount") == .ok)
        #expect(store.get("cart.total") == 12)
        #expect(store.merge("cart.total.x", ["a": 1]) != .ok)
    }

    @Test func invalidKeyPathsAreRefusedWithACaret() {
        let store = makeStore()
        let result = store.set("items[0.title", 1)
        #expect(
            result
                == .failed(
                    reason:
                        "items[0.title: invalid key path at character 8: expected ']', found '.'\n  items[0.title\n         ^"
                ))
        #expect(store.get("a..b") == nil)
        #expect(store.snapshot().isEmpty)
    }

    @Test func wildcardsSelectButDoNotWrite() {
        let store = makeStore()
        store.set("items", [["price": 1.5], ["title": "no price"], ["price": 3]])
        store.set("prices", ["eur": 1, "usd": 2])
        #expect(store.get("items[*].price") == [1.5, 3])
        #expect(store.get("prices.*") == [1, 2])
        #expect(store.get("items[*].missing") == nil)
        #expect(
            store.set("items[*].price", 0)
                == .failed(reason: "items[*].price: a write needs a concrete path, not a pattern"))
        #expect(store.merge("items[*]", ["a": 1]) != .ok)
    }

    @Test func theRootIsTheWholeObject() {
        let store = makeStore()
        store.set("a", 1)
        #expect(store.get("$") == ["a": 1])
        #expect(store.set("$", ["b": 2]) == .ok)
        #expect(store.snapshot() == ["b": 2])
        #expect(store.set("$", 3) == .failed(reason: "$: the root must be an object, not integer"))
    }

    @Test func removingAnElementShiftsTheRest() {
        let store = makeStore()
        store.set("list", ["a", "b", "c"])
        store.remove("list[0]")
        #expect(store.get("list") == ["b", "c"])
        #expect(store.get("list[0]") == "b")
    }

    @Test func nullIsAValueAndAbsenceIsNil() {
        let store = makeStore()
        store.set("maybe", .null)
        #expect(store.exists("maybe"))
        #expect(store.get("maybe") == .null)
        store.remove("maybe")
        #expect(!store.exists("maybe"))
        #expect(store.get("maybe") == nil)
    }
}

/// Merge follows JSON Merge Patch (RFC 7396).
struct MergeTests {
    private func makeStore() -> any KeyValueStore { DefaultStore(appID: "merge").named(.appMemory) }

    @Test func mergesRecursivelyAndNullRemoves() {
        let store = makeStore()
        store.set(
            "user", ["name": "Ada", "address": ["city": "Paris", "zip": "75001"], "tags": ["a", "b"], "age": 36])
        #expect(
            store.merge("user", ["address": ["city": "Lyon", "zip": .null], "tags": ["c"], "age": .null, "new": 1])
                == .ok)
        #expect(store.get("user") == ["name": "Ada", "address": ["city": "Lyon"], "tags": ["c"], "new": 1])
    }

    @Test func createsAMissingTargetAndReplacesANonObject() {
        let store = makeStore()
        #expect(store.merge("settings.theme", ["dark": true, "gone": .null]) == .ok)
        #expect(store.get("settings") == ["theme": ["dark": true]])
        store.set("count", 3)
        #expect(store.merge("count", ["value": 3]) == .ok)
        #expect(store.get("count") == ["value": 3])
    }

    @Test func nestedObjectMembersReplaceNonObjectsAndDropTheirNulls() {
        let store = makeStore()
        store.set("a", ["b": 1])
        store.merge("a", ["b": ["c": 2, "d": .null]])
        #expect(store.get("a") == ["b": ["c": 2]])
    }

    @Test func mergeIsOnePatchWithTheWholeOldAndNewObject() throws {
        let store = DefaultStore(appID: "merge").scoped(.appMemory)
        store.set("a", ["x": 1, "y": 2])
        let changes = Recorder<StoreChange>()
        let cancellable = store.changesPublisher.sink { changes.append($0) }
        defer { cancellable.cancel() }
        store.merge("a", ["y": .null, "z": 3])
        let change = try #require(changes.values.first)
        #expect(
            change.patches == [
                StorePatch(op: .merge, keyPath: "a", oldValue: ["x": 1, "y": 2], newValue: ["x": 1, "z": 3])
            ])
        #expect(change.transactionID == nil)
    }

    @Test func mergingAtTheRootMergesTopLevelKeys() {
        let store = makeStore()
        store.set("keep", 1)
        store.set("drop", 2)
        store.merge("$", ["drop": .null, "add": 3])
        #expect(store.snapshot() == ["keep": 1, "add": 3])
    }
}
