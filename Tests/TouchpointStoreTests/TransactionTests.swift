import Foundation
import Testing

@testable import TouchpointStore

#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif

struct TransactionTests {
    @Test func patchesCoalesceIntoOneChange() throws {
        let store = DefaultStore(appID: "tx").scoped(.scenarioSession(id: "checkout"))
        store.set("cart.total", 0)
        let changes = Recorder<StoreChange>()
        let totals = Recorder<StoreValue?>()
        let c1 = store.changesPublisher.sink { changes.append($0) }
        let c2 = store.publisher(for: "cart").sink { totals.append($0) }
        defer {
            c1.cancel()
            c2.cancel()
        }
        let result = store.transaction { t in
            t.set("cart.total", 10)
            t.set("cart.items[0]", "socks")
            #expect(t.get("cart.total") == 10)  // the block reads its own writes
            t.merge("cart", ["coupon": "SPRING"])
            t.remove("cart.total")
            t.set("cart.total", 8)
        }
        #expect(result == .ok)
        #expect(changes.values.count == 1)
        let change = try #require(changes.values.first)
        #expect(change.transactionID != nil)
        #expect(change.scenarioID == "checkout")
        #expect(change.patches.map(\.op) == [.set, .set, .merge, .remove, .set])
        #expect(change.patches.map(\.keyPath) == ["cart.total", "cart.items[0]", "cart", "cart.total", "cart.total"])
        // Subscribers see the end state once, not the steps.
        #expect(totals.values == [["total": 0], ["total": 8, "items": ["socks"], "coupon": "SPRING"]])
    }

    @Test func strictFailureRollsBackEverything() {
        let store = DefaultStore(appID: "tx").scoped(.appMemory)
        store.configureValidation(.init(mode: .strict, schema: ["count": Rule(kind: .integer, max: 10)]))
        store.set("count", 1)
        store.set("name", "before")
        let changes = Recorder<StoreChange>()
        let cancellable = store.changesPublisher.sink { changes.append($0) }
        defer { cancellable.cancel() }
        let result = store.transaction { t in
            t.set("name", "after")
            t.set("count", 11)  // breaks max
            t.set("other", true)
        }
        #expect(result == .failed(reason: "transaction rolled back: count: value 11 is above the maximum 10"))
        #expect(store.snapshot() == ["count": 1, "name": "before"])
        #expect(changes.values.isEmpty)
        // Every write was undone as it should be: no step of the rollback failed.
        #expect(store.internalFailureCount == 0)
    }

    @Test func aBadKeyPathAlsoRollsBackInStrictMode() {
        let store = DefaultStore(appID: "tx").named(.appMemory)
        store.set("a", 1)
        let result = store.transaction { t in
            t.set("b", 2)
            t.set("a.x", 3)  // a is a number
        }
        #expect(result != .ok)
        #expect(store.snapshot() == ["a": 1])
    }

    @Test func lenientTransactionsSkipOnlyTheWriteThatCannotBeFixed() {
        let store = DefaultStore(appID: "tx").named(.appMemory)
        store.configureValidation(.init(mode: .lenient, schema: ["count": Rule(kind: .integer)]))
        let result = store.transaction { t in
            t.set("count", "7")  // coerced
            t.set("name", "kept")
            t.set("count", ["not": "a number"])  // no coercion, no default: skipped
        }
        #expect(result == .ok)
        #expect(store.snapshot() == ["count": 7, "name": "kept"])
    }

    @Test func writesThroughTheStoreInsideTheBlockJoinTheTransaction() throws {
        let store = DefaultStore(appID: "tx").scoped(.appMemory)
        let changes = Recorder<StoreChange>()
        let cancellable = store.changesPublisher.sink { changes.append($0) }
        defer { cancellable.cancel() }
        store.transaction { t in
            t.set("a", 1)
            store.set("b", 2)  // the real store, same thread: part of the transaction
            #expect(store.get("a") == 1)
            t.transaction { nested in nested.set("c", 3) }  // nested transactions join
        }
        #expect(changes.values.count == 1)
        #expect(try #require(changes.values.first).patches.count == 3)
        #expect(store.snapshot() == ["a": 1, "b": 2, "c": 3])
    }

    @Test func noOtherWriterRunsWhileTheBlockRuns() {
        let store = DefaultStore(appID: "tx").scoped(.appMemory)
        store.set("n", 0)
        let written = DispatchSemaphore(value: 0)
        var seenInside: StoreValue?
        var writerWasWaiting = false
        store.transaction { t in
            Thread {
                store.set("n", 100)  // blocks until the transaction commits
                written.signal()
            }.start()
            // Hold the block until the other writer is waiting for it (bounded, in case it never comes).
            let deadline = Date().addingTimeInterval(30)
            while store.waitingWriters == 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
            writerWasWaiting = store.waitingWriters == 1
            seenInside = t.get("n")
            guard case .integer(let n)? = seenInside else { return }
            t.set("n", .integer(n + 1))
        }
        #expect(writerWasWaiting, "the other writer reached the store while the block ran")
        #expect(seenInside == 0, "and had not written")
        #expect(written.wait(timeout: .now() + 30) == .success)
        // Had the other write slipped in during the block, the commit (n = 0 + 1) would have
        // overwritten it; serial writers put it after the commit instead.
        #expect(store.get("n") == 100)
        #expect(store.waitingWriters == 0)
    }

    @Test func expressionsRunOnceAtCommit() {
        let store = DefaultStore(appID: "tx").named(.appMemory)
        let runs = Recorder<Int>()
        store.registerLiveExpression(
            .init(id: "count", outputKeyPath: "count", dependsOn: ["items"]) { get in
                runs.append(1)
                return .integer(get("items")?.arrayValue?.count ?? 0)
            })
        #expect(runs.values.count == 1)  // at registration
        store.transaction { t in
            for index in 0..<5 { t.set("items[\(index)]", .integer(index)) }
            #expect(t.get("count") == 5)  // the block's copy keeps derived values current
        }
        #expect(store.get("count") == 5)
        #expect(runs.values.count == 1 + 5 + 1)  // 5 in the block's copy, once at commit
    }
    @Test func endingAScenarioInsideItsOwnTransactionJoinsIt() {
        let store = DefaultStore(appID: "tx")
        let session = store.named(.scenarioSession(id: "s"))
        session.set("a", 1)
        let result = session.transaction { t in
            t.set("b", 2)
            store.endScenario(id: "s")  // would deadlock on the writer lock if it did not join
            t.set("c", 3)
        }
        #expect(result == .ok)
        #expect(session.snapshot() == ["c": 3])
    }
}
