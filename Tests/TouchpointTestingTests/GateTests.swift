import Testing
import TouchpointCore
import TouchpointTesting

struct GateTests {
    @Test func tasksWaitUntilTheTestLetsThemThroughInTurn() async throws {
        let gate = Gate()
        let passed = Locked<[Int]>([])
        let first = Task {
            await gate.pass()
            passed.withLock { $0.append(1) }
        }
        #expect(await eventually { gate.waiting == 1 })
        let second = Task {
            await gate.pass()
            passed.withLock { $0.append(2) }
        }
        #expect(await eventually { gate.waiting == 2 })
        #expect(gate.arrivals == 2)
        gate.open()
        #expect(gate.waiting == 1, "one let through, the first to arrive")
        await first.value
        #expect(passed.value == [1])
        gate.open()
        await second.value
        #expect(passed.value == [1, 2])
        #expect(gate.waiting == 0)
    }

    @Test func anOpeningBeforeAnArrivalIsKeptForIt() async {
        let gate = Gate()
        gate.open(2)
        await gate.pass()
        await gate.pass()
        #expect(gate.arrivals == 2)
        #expect(gate.waiting == 0)
    }

    @Test func aCancelledTaskLeavesTheGate() async {
        let gate = Gate()
        let waiting = Task { await gate.pass() }
        #expect(await eventually { gate.waiting == 1 })
        waiting.cancel()
        await waiting.value
        #expect(gate.waiting == 0)
        // The opening goes to the next arrival, not to the task that left.
        gate.open()
        await gate.pass()
        #expect(gate.arrivals == 2)
    }

    @Test func aThreadWaitsBlockedUntilTheTestOpens() async throws {
        let gate = Gate()
        let thread = Task { await onOwnThread { gate.passBlocking() } }
        #expect(await eventually { gate.waiting == 1 })
        gate.open()
        await thread.value
        #expect(gate.arrivals == 1 && gate.waiting == 0)
    }
}
