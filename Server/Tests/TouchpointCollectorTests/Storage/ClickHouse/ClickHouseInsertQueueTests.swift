import Testing
import TouchpointCore
import TouchpointTesting

@testable import TouchpointCollector

@Suite("ClickHouse insert queue")
struct ClickHouseInsertQueueTests {
    /// The inserts the queue sent, each as its lines.
    final class Sent: Sendable {
        let bodies = Locked<[String]>([])
    }

    @Test func requestsThatArriveWhileAnInsertIsInFlightGoTogetherInTheNext() async throws {
        let gate = Gate()
        let sent = Sent()
        let queue = ClickHouseInsertQueue { lines in
            sent.bodies.withLock { $0.append(String(decoding: lines, as: UTF8.self)) }
            await gate.pass()
        }
        let first = Task { try await queue.insert(Array("{\"n\":0}\n".utf8)) }
        #expect(await eventually { gate.arrivals == 1 })
        let others = (1...5).map { index in
            Task { try await queue.insert(Array("{\"n\":\(index)}\n".utf8)) }
        }
        #expect(await eventually { await queue.waitingCount == 5 })
        gate.open(2)
        try await first.value
        for other in others { try await other.value }
        let bodies = sent.bodies.value
        #expect(bodies.count == 2)
        #expect(bodies.first == "{\"n\":0}\n")
        #expect(bodies.last?.split(separator: "\n").sorted() == (1...5).map { "{\"n\":\($0)}" })
        #expect(await queue.insertsSent == 2)
    }

    @Test func aFailedInsertFailsEveryRequestItCarriedAndTheNextStartsAfresh() async throws {
        struct Refused: Error {}
        let gate = Gate()
        let failing = Locked(true)
        let queue = ClickHouseInsertQueue { _ in
            await gate.pass()
            if failing.value { throw Refused() }
        }
        let first = Task { try await queue.insert(Array("a\n".utf8)) }
        #expect(await eventually { gate.arrivals == 1 })
        let second = Task { try await queue.insert(Array("b\n".utf8)) }
        let third = Task { try await queue.insert(Array("c\n".utf8)) }
        #expect(await eventually { await queue.waitingCount == 2 })
        gate.open(2)
        await #expect(throws: Refused.self) { try await first.value }
        await #expect(throws: Refused.self) { try await second.value }
        await #expect(throws: Refused.self) { try await third.value }

        failing.withLock { $0 = false }
        gate.open()
        try await queue.insert(Array("d\n".utf8))
        #expect(await queue.insertsSent == 3)
    }
}
