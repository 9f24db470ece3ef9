import Testing

@testable import TouchpointRouting

struct FanoutQueueTests {
    @Test func itemsWaitBeforeStartAndEveryLaneReadsThemInOrder() {
        var queue = FanoutQueue<Int>(capacity: 8)
        for item in 0..<3 { _ = queue.append(item) }
        #expect(queue.count == 3)
        let lanes = queue.addLanes(2)
        #expect(lanes == 0..<2)
        #expect(queue.take(lane: 0, limit: 10).isEmpty)  // not configured yet
        queue.configured(lane: 0, succeeded: true)
        queue.configured(lane: 1, succeeded: true)
        #expect(queue.take(lane: 0, limit: 2) == [0, 1])
        queue.finish(lane: 0)
        #expect(queue.take(lane: 0, limit: 10) == [2])
        queue.finish(lane: 0)
        #expect(queue.count == 3)  // lane 1 has taken nothing
        #expect(queue.take(lane: 1, limit: 10) == [0, 1, 2])
        #expect(queue.count == 0)
    }

    @Test func fullQueueBeforeStartDropsTheOldestAndCountsThem() {
        var queue = FanoutQueue<Int>(capacity: 3)
        for item in 0..<5 { _ = queue.append(item) }
        #expect(queue.droppedBeforeStart == 2)
        _ = queue.addLanes(1)
        queue.configured(lane: 0, succeeded: true)
        #expect(queue.take(lane: 0, limit: 10) == [2, 3, 4])
        #expect(queue.lanes[0].dropped == 0)
    }

    @Test func aLaggingLaneLosesItsOldestItemsAndTheOthersNothing() {
        var queue = FanoutQueue<Int>(capacity: 3)
        _ = queue.addLanes(2)
        queue.configured(lane: 0, succeeded: true)
        queue.configured(lane: 1, succeeded: true)
        for item in 0..<6 {
            _ = queue.append(item)
            #expect(queue.take(lane: 0, limit: 10) == [item])
            queue.finish(lane: 0)
        }
        #expect(queue.lanes[0].dropped == 0)
        #expect(queue.lanes[1].dropped == 3)
        #expect(queue.take(lane: 1, limit: 10) == [3, 4, 5])
        #expect(queue.droppedBeforeStart == 0)
    }

    /// A reset that falls out of the full queue is not lost: the lagging lane gets it first, then
    /// what is left; the lane that kept up is not affected, and a reset is not counted as dropped.
    @Test func anOwedItemEvictedFromALaggingLaneComesFirst() {
        var queue = FanoutQueue<String>(capacity: 2, isOwed: { $0 == "reset" })
        _ = queue.addLanes(2)
        queue.configured(lane: 0, succeeded: true)
        queue.configured(lane: 1, succeeded: true)
        for item in ["a", "reset", "b", "c"] {
            _ = queue.append(item)
            #expect(queue.take(lane: 0, limit: 10) == [item])
            queue.finish(lane: 0)
        }
        #expect(queue.lanes[1].dropped == 1, "a was lost, the reset was not")
        #expect(queue.lanes[1].done == 1, "the reset (sequence 1) is not done with")
        #expect(queue.take(lane: 1, limit: 10) == ["reset", "b", "c"])
        queue.finish(lane: 1)
        #expect(queue.lanes[1].done == 4)
        #expect(queue.lanes[0].dropped == 0)
    }

    @Test func anOwedItemEvictedBeforeStartReachesTheFirstLanes() {
        var queue = FanoutQueue<String>(capacity: 2, isOwed: { $0 == "reset" })
        for item in ["a", "reset", "b", "c"] { _ = queue.append(item) }
        #expect(queue.droppedBeforeStart == 1)
        _ = queue.addLanes(1)
        queue.configured(lane: 0, succeeded: true)
        #expect(queue.take(lane: 0, limit: 10) == ["reset", "b", "c"])

        var handed = FanoutQueue<String>(capacity: 2, isOwed: { $0 == "reset" })
        for item in ["reset", "b", "c"] { _ = handed.append(item) }
        #expect(handed.removeAll() == ["reset", "b", "c"], "handing the queue over keeps the reset")
    }

    @Test func aLaneWithABatchInFlightKeepsItAndTakesNoOther() {
        var queue = FanoutQueue<Int>(capacity: 2)
        _ = queue.addLanes(1)
        queue.configured(lane: 0, succeeded: true)
        _ = queue.append(0)
        #expect(queue.take(lane: 0, limit: 10) == [0])
        _ = queue.append(1)
        #expect(queue.take(lane: 0, limit: 10).isEmpty)
        #expect(queue.lanes[0].done == 0)
        queue.finish(lane: 0)
        #expect(queue.lanes[0].done == 1)
        #expect(queue.take(lane: 0, limit: 10) == [1])
    }

    @Test func onlyASleepingLaneNeedsAWakeUp() {
        var queue = FanoutQueue<Int>(capacity: 4)
        _ = queue.addLanes(2)
        queue.configured(lane: 0, succeeded: true)
        queue.configured(lane: 1, succeeded: true)
        #expect(queue.append(0) == false)
        queue.setWait(lane: 0, .lingering)
        #expect(queue.append(1) == false)
        queue.setWait(lane: 1, .sleeping)
        #expect(queue.append(2) == true)
        #expect(queue.lanes[1].wait == .busy)
        #expect(queue.append(3) == false)  // already woken
    }

    @Test func aFailedLaneDropsEverythingAndHoldsNothingBack() {
        var queue = FanoutQueue<Int>(capacity: 4)
        _ = queue.append(0)
        _ = queue.addLanes(2)
        queue.configured(lane: 0, succeeded: true)
        queue.configured(lane: 1, succeeded: false)
        #expect(queue.lanes[1].dropped == 1)
        _ = queue.append(1)
        #expect(queue.lanes[1].dropped == 2)
        #expect(queue.take(lane: 1, limit: 10).isEmpty)
        #expect(queue.take(lane: 0, limit: 10) == [0, 1])
        #expect(queue.count == 0)
    }

    @Test func lanesAddedAfterStartReadOnlyNewItems() {
        var queue = FanoutQueue<Int>(capacity: 4)
        _ = queue.addLanes(1)
        _ = queue.append(0)  // lane 0 is still configuring, so the item is held
        let added = queue.addLanes(1)
        #expect(added == 1..<2)
        queue.configured(lane: 0, succeeded: true)
        queue.configured(lane: 1, succeeded: true)
        _ = queue.append(1)
        #expect(queue.take(lane: 1, limit: 10) == [1])
        #expect(queue.take(lane: 0, limit: 10) == [0, 1])
    }

    @Test func aClosedQueueTakesNothingNewAndLanesFinishAfterDraining() {
        var queue = FanoutQueue<Int>(capacity: 4)
        _ = queue.addLanes(1)
        queue.configured(lane: 0, succeeded: true)
        _ = queue.append(0)
        queue.setWait(lane: 0, .sleeping)
        #expect(queue.close() == true)
        #expect(queue.append(1) == false)
        #expect(queue.isFinished(lane: 0) == false)
        #expect(queue.take(lane: 0, limit: 10) == [0])
        queue.finish(lane: 0)
        #expect(queue.isFinished(lane: 0))
    }

    @Test func removeAllHandsOverTheHeldItems() {
        var queue = FanoutQueue<Int>(capacity: 3)
        for item in 0..<4 { _ = queue.append(item) }
        #expect(queue.removeAll() == [1, 2, 3])
        #expect(queue.count == 0)
        _ = queue.append(9)
        _ = queue.addLanes(1)
        queue.configured(lane: 0, succeeded: true)
        #expect(queue.take(lane: 0, limit: 10) == [9])
    }
}
