import Foundation
import Testing
import TouchpointStore

#if canImport(Combine)
import Combine
#else
import OpenCombineShim
#endif

struct ObservationTests {
    /// Subscribes to `keyPath` and records what arrives (the current value first).
    final class Watcher {
        let values = Recorder<StoreValue?>()
        private var cancellable: AnyCancellable?

        init(_ store: any KeyValueStore, _ keyPath: String) {
            let values = self.values
            cancellable = store.publisher(for: keyPath).sink { values.append($0) }
        }

        /// What arrived after the current value.
        var changes: [StoreValue?] { Array(values.values.dropFirst()) }

        func cancel() { cancellable?.cancel() }
    }

    @Test func onlyAncestorsDescendantsAndMatchesOfAChangedPathAreNotified() {
        let store = DefaultStore(appID: "observe").named(.appMemory)
        store.set("a", ["b": ["c": 1, "d": 2]])
        store.set("items", [["price": 1, "title": "x"]])
        let exact = Watcher(store, "a.b.c")
        let parent = Watcher(store, "a.b")
        let grandparent = Watcher(store, "a")
        let root = Watcher(store, "$")
        let sibling = Watcher(store, "a.b.d")
        let unrelated = Watcher(store, "x")
        let prices = Watcher(store, "items[*].price")
        let titles = Watcher(store, "items[*].title")

        store.set("a.b.c", 5)
        #expect(exact.changes == [5])
        #expect(parent.changes == [["c": 5, "d": 2]])
        #expect(grandparent.changes.count == 1)
        #expect(root.changes.count == 1)
        #expect(sibling.changes.isEmpty)
        #expect(unrelated.changes.isEmpty)
        #expect(prices.changes.isEmpty)

        // The same value again changes nothing, so nobody hears about it.
        store.set("a.b.c", 5)
        #expect(exact.changes == [5])
        #expect(root.changes.count == 1)

        // Replacing a parent notifies a descendant only when its own value differs.
        store.set("a.b", ["c": 5, "d": 3])
        #expect(exact.changes == [5])
        #expect(sibling.changes == [3])

        store.set("items[0].title", "y")
        #expect(prices.changes.isEmpty)
        #expect(titles.changes == [["y"]])
        store.set("items[1]", ["price": 2])
        #expect(prices.changes == [[1, 2]])
        #expect(titles.changes == [["y"]])
        store.set("x", true)
        #expect(unrelated.changes == [true])
    }

    @Test func removingAnElementNotifiesTheElementsThatMoved() {
        let store = DefaultStore(appID: "observe").named(.appMemory)
        store.set("list", ["a", "b", "c"])
        let first = Watcher(store, "list[0]")
        let second = Watcher(store, "list[1]")
        let third = Watcher(store, "list[2]")
        store.remove("list[1]")
        #expect(first.changes.isEmpty)
        #expect(second.changes == ["c"])
        #expect(third.changes == [nil])
    }

    @Test func setPublisherSendsOneObjectOfAllItsPaths() {
        let store = DefaultStore(appID: "observe").named(.appMemory)
        store.set("cart.total", 3)
        let received = Recorder<StoreValue>()
        let cancellable = store.publisher(for: ["cart.total", "user.name"]).sink { received.append($0) }
        defer { cancellable.cancel() }
        store.set("user.name", "Ada")
        store.set("unrelated", 1)
        store.set("cart.total", 4)
        #expect(
            received.values == [
                ["cart.total": 3, "user.name": .null], ["cart.total": 3, "user.name": "Ada"],
                ["cart.total": 4, "user.name": "Ada"],
            ])
    }

    @Test func cancellingEndsTheSubscription() {
        let store = DefaultStore(appID: "observe").scoped(.appMemory)
        let watcher = Watcher(store, "a")
        #expect(store.subscriptionCount == 1)
        store.set("a", 1)
        watcher.cancel()
        #expect(store.subscriptionCount == 0)
        store.set("a", 2)
        #expect(watcher.changes == [1])
    }

    @Test func asyncStreamsStartWithTheCurrentValueAndEndCleanly() async {
        let store = DefaultStore(appID: "observe").scoped(.appMemory)
        store.set("n", 0)
        var received: [StoreValue?] = []
        do {
            let stream = store.values(for: "n")
            #expect(store.subscriptionCount == 1)
            for value in 1...3 { store.set("n", .integer(value)) }
            for await value in stream {
                received.append(value)
                if received.count == 4 { break }
            }
        }
        #expect(received == [0, 1, 2, 3])
        // Releasing the stream ends the subscription.
        #expect(store.subscriptionCount == 0)

        let combined = store.values(for: ["n", "m"])
        store.set("m", "x")
        var iterator = combined.makeAsyncIterator()
        #expect(await iterator.next() == ["n": 3, "m": .null])
        #expect(await iterator.next() == ["n": 3, "m": "x"])
    }

    @Test func changeStreamCarriesWholeChanges() async throws {
        let store = DefaultStore(appID: "observe").scoped(.scenarioSession(id: "s1"))
        let changes = store.changes()
        store.set("a", 1)
        var iterator = changes.makeAsyncIterator()
        let change = try #require(await iterator.next())
        #expect(
            change
                == StoreChange(
                    scenarioID: "s1", patches: [StorePatch(op: .set, keyPath: "a", oldValue: nil, newValue: 1)],
                    transactionID: nil))
    }

    @Test func aSubscriberMayWriteFromItsCallbackAndEveryoneSeesChangesInOrder() {
        let store = DefaultStore(appID: "observe").named(.appMemory)
        let doubled = Watcher(store, "doubled")
        let cancellable = store.publisher(for: "n").sink { value in
            guard case .integer(let n)? = value else { return }
            store.set("doubled", .integer(n * 2))
            if n == 1 { store.set("n", 2) }
        }
        defer { cancellable.cancel() }
        let observer = Watcher(store, "n")
        store.set("n", 1)
        #expect(observer.changes == [1, 2])
        #expect(doubled.changes == [2, 4])
        #expect(store.get("doubled") == 4)
    }

    @Test func aFeedbackLoopStopsAtTheCascadeLimit() {
        let store = DefaultStore(appID: "observe", configuration: .init(maximumCascadeDepth: 8)).named(.appMemory)
        let cancellable = store.publisher(for: "n").sink { value in
            guard case .integer(let n)? = value else { return }
            store.set("n", .integer(n + 1))
        }
        defer { cancellable.cancel() }
        store.set("n", 1)
        // The first write is depth 1; each callback's write one deeper; depth 9 is refused.
        #expect(store.get("n") == 8)
    }

    @Test func concurrentWritersAndReadersSeeEveryWrite() {
        let store = DefaultStore(appID: "observe").scoped(.appMemory)
        let sums = Recorder<StoreValue?>()
        let cancellable = store.publisher(for: "counters").sink { sums.append($0) }
        defer { cancellable.cancel() }
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for step in 0..<200 {
                store.set("counters.w\(worker)", .integer(step))
                _ = store.get("counters")
                _ = store.snapshot()
            }
        }
        let final = store.get("counters")?.objectValue ?? [:]
        #expect(final.count == 8)
        #expect(final.values.allSatisfy { $0 == 199 })
        #expect(sums.values.last == .object(final))
    }
    @Test func manySubscribersUnderOneChangeEachHearOnce() {
        let store = DefaultStore(appID: "observe").named(.appMemory)
        let watchers = (0..<40).map { Watcher(store, "grid[\($0)]") }
        store.set("grid", .array((0..<40).map { .integer($0) }))
        store.set("grid", .array((0..<40).map { .integer($0 % 2 == 0 ? $0 : -$0) }))
        for (index, watcher) in watchers.enumerated() {
            let expected: [StoreValue?] = index % 2 == 0 ? [.integer(index)] : [.integer(index), .integer(-index)]
            #expect(watcher.changes == expected, "grid[\(index)]")
        }
    }

    @Test func aSubscriberWithoutDemandGetsTheNewestValueWhenItAsks() {
        final class Slow: Subscriber, @unchecked Sendable {
            typealias Input = StoreValue?
            typealias Failure = Never
            var subscription: (any Subscription)?
            var received: [StoreValue?] = []
            func receive(subscription: any Subscription) {
                self.subscription = subscription
                subscription.request(.max(1))
            }
            func receive(_ input: StoreValue?) -> Subscribers.Demand {
                received.append(input)
                return .none
            }
            func receive(completion: Subscribers.Completion<Never>) {}
        }
        let store = DefaultStore(appID: "observe").scoped(.appMemory)
        store.set("n", 0)
        let slow = Slow()
        store.publisher(for: "n").subscribe(slow)
        for value in 1...5 { store.set("n", .integer(value)) }
        #expect(slow.received == [0])
        slow.subscription?.request(.max(1))
        #expect(slow.received == [0, 5])  // the newest, not a backlog
        slow.subscription?.cancel()
        #expect(store.subscriptionCount == 0)
    }

    /// A write remembers which subscribers its path can reach; subscribing and cancelling must
    /// make it look again.
    @Test func subscribersAddedAndRemovedBetweenRepeatedWritesAreSeen() {
        let store = DefaultStore(appID: "observe").named(.appMemory)
        let elsewhere = Watcher(store, "user.name")
        store.set("cart.total", 1)
        store.set("cart.total", 2)
        let total = Watcher(store, "cart.total")
        let cart = Watcher(store, "cart")
        let any = Watcher(store, "*.total")
        store.set("cart.total", 3)
        #expect(total.changes == [3])
        #expect(cart.changes == [["total": 3]])
        #expect(any.changes == [[3]])
        cart.cancel()
        store.set("cart.total", 4)
        #expect(total.changes == [3, 4])
        #expect(cart.changes == [["total": 3]])
        #expect(any.changes == [[3], [4]])
        // Writing the same path twice in one change: one notification, with the last value.
        store.transaction { t in
            t.set("cart.total", 5)
            t.set("cart.total", 6)
        }
        #expect(total.changes == [3, 4, 6])
        // Writing the value back within the change: nothing to tell.
        store.transaction { t in
            t.set("cart.total", 7)
            t.set("cart.total", 6)
        }
        #expect(total.changes == [3, 4, 6])
        #expect(elsewhere.changes.isEmpty)
    }

    @Test func anInvalidKeyPathPublishesNilOnceAndFinishes() {
        let store = DefaultStore(appID: "observe").scoped(.appMemory)
        let values = Recorder<StoreValue?>()
        let finished = Recorder<Bool>()
        let cancellable = store.publisher(for: "a[").sink(
            receiveCompletion: { _ in finished.append(true) }, receiveValue: { values.append($0) })
        defer { cancellable.cancel() }
        #expect(values.values == [nil])
        #expect(finished.values == [true])
        #expect(store.subscriptionCount == 0)
    }
}
